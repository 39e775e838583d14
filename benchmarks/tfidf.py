"""TF-IDF and truncated SVD against scikit-learn on prose_mix, one document per line."""

from __future__ import annotations

from . import Case, CheckFailed, benchmark

_PROSE = ("prose_mix (23,151,227 bytes, 165,631 non-empty lines, one document per line); each side gets the same "
          "list of lines")


def _prose_lines() -> tuple[list[str], int]:
    from tokembed.datasets import dataset_path

    text = dataset_path("prose_mix").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()], len(text.encode("utf-8"))


@benchmark(
    "tfidf_fit_transform",
    description="TF-IDF fit_transform from raw lines, tokenization included (scikit-learn's token pattern, "
    "lowercase, smooth idf, l2).",
    ours='tokembed `TfidfVectorizer(pre_tokenizer="sklearn").fit_transform(lines)`',
    reference="scikit-learn `TfidfVectorizer().fit_transform(lines)`",
    check="identical vocabulary and feature order; matrices equal within 1e-9 (float64)",
    data=_PROSE,
    libraries=("scikit-learn", "scipy", "numba"),
)
def tfidf_fit_transform() -> Case:
    from sklearn.feature_extraction.text import TfidfVectorizer as SkTfidf

    from tokembed.plugins.tfidf.vectorizer import TfidfVectorizer

    lines, n_bytes = _prose_lines()

    def ours():
        vec = TfidfVectorizer(pre_tokenizer="sklearn")
        return vec.fit_transform(lines), list(vec.get_feature_names_out())

    def reference():
        vec = SkTfidf()
        return vec.fit_transform(lines), list(vec.get_feature_names_out())

    def check(o, r) -> str:
        (X, names), (Y, ref_names) = o, r
        if names != ref_names:
            raise CheckFailed(f"vocabularies differ: {len(names):,} terms (ours) vs {len(ref_names):,}")
        if X.shape != Y.shape:
            raise CheckFailed(f"shapes differ: {X.shape} vs {Y.shape}")
        diff = abs(X - Y).max() if X.nnz or Y.nnz else 0.0
        if diff > 1e-9:
            raise CheckFailed(f"matrices differ by up to {diff:.3g}")
        return (f"{len(names):,} terms identical; {X.shape[0]:,} x {X.shape[1]:,} matrices, {X.nnz:,} non-zeros, equal "
                f"within {diff:.1g}")

    return Case(ours=ours, reference=reference, check=check, work_bytes=n_bytes,
                notes="Both sides lowercase with `str.lower` and split with scikit-learn's `(?u)\\b\\w\\w+\\b` (ours: "
                "the `sklearn` pre-tokenizer on the Numba scanner, 2 threads; per-document counts, document "
                "frequencies and the weighting in Numba kernels or NumPy over the CSR arrays). scikit-learn runs "
                "its regex and the counting in Python, on one thread. Ours includes the kernels loaded from "
                "Numba's on-disk cache (compiled in the untimed warm-up).")


@benchmark(
    "svd_randomized",
    description="Truncated SVD, 100 components, randomized, n_iter=5, n_oversamples=10, of the TF-IDF matrix of "
    "prose_mix's lines (165,631 x 62,545, 1.8 M non-zeros).",
    ours="tokembed `TruncatedSVD(n_components=100, n_iter=5, seed=0).fit_transform(X)` "
    "(power_iteration_normalizer='auto')",
    reference="scikit-learn `TruncatedSVD(n_components=100, n_iter=5, random_state=0).fit_transform(X)` "
    "(power_iteration_normalizer='auto': LU)",
    check="the 10 largest singular values within 1e-4 relative, total explained variance ratio within 1%",
    data="the float64 CSR matrix of scikit-learn's TfidfVectorizer on " + _PROSE + " (built in the setup)",
    libraries=("scikit-learn", "scipy", "numba"),
)
def svd_randomized() -> Case:
    import numba
    import numpy as np
    from sklearn.decomposition import TruncatedSVD as SkSVD
    from sklearn.feature_extraction.text import TfidfVectorizer as SkTfidf

    from tokembed.plugins.svd.vectorizer import TruncatedSVD

    lines, _ = _prose_lines()
    X = SkTfidf().fit_transform(lines)

    def ours():
        svd = TruncatedSVD(n_components=100, n_iter=5, seed=0)
        svd.fit_transform(X)
        return svd

    def reference():
        svd = SkSVD(n_components=100, n_iter=5, random_state=0)
        svd.fit_transform(X)
        return svd

    def check(o, r) -> str:
        rel = np.abs(o.singular_values_[:10] / r.singular_values_[:10] - 1).max()
        total_o, total_r = o.explained_variance_ratio_.sum(), r.explained_variance_ratio_.sum()
        if rel > 1e-4:
            raise CheckFailed(f"the 10 largest singular values differ by {rel:.2g} relative")
        if abs(total_o / total_r - 1) > 0.01:
            raise CheckFailed(f"explained variance ratio {total_o:.4f} (ours) vs {total_r:.4f}")
        return (f"10 largest singular values within {rel:.1g} relative; explained variance ratio {total_o:.4f} "
                f"(ours) vs {total_r:.4f}")

    try:
        from threadpoolctl import threadpool_info

        blas = ", ".join(sorted({f"{i['internal_api']} {i['num_threads']} threads" for i in threadpool_info()
                                 if i["user_api"] == "blas"}))
    except ImportError:
        blas = "BLAS threads unknown"
    return Case(ours=ours, reference=reference, check=check,
                notes=f"Threads: ours runs the sparse products X @ B and X^T @ B in a Numba kernel on "
                f"{numba.get_num_threads()} threads and the dense factorisations (Cholesky QR via syrk, the small "
                f"SVD) on BLAS ({blas}); scikit-learn's sparse products are scipy.sparse's, on one thread, and its "
                f"LU and QR factorisations use the same BLAS ({blas}). Same test-block width (110) and iterations; "
                "the random draws differ.")
