"""Tests of the sinusoidal Transformer input embedding (Vaswani et al. 2017, sections 3.4 and 3.5)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from tokembed import build_registry
from tokembed.errors import ArtifactError, NotFittedError, ParameterError, TokembedError
from tokembed.plugins.sinusoidal.embedder import SinusoidalEmbedder, sinusoidal_table


def fitted(**params):
    params.setdefault("vocab_size", 50)
    return SinusoidalEmbedder(**params).fit()


# -- positional table: values computed by hand ------------------------------------------------------------------
def test_pe_d5_interleaved_hand_values():
    pe = SinusoidalEmbedder(d_model=5, max_len=10).positional_encoding()
    assert pe.shape == (10, 5) and pe.dtype == np.float32
    # pos 0: sin(0) = 0 in the sine columns 0, 2, 4 and cos(0) = 1 in the cosine columns 1, 3
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1, 0], atol=1e-6, rtol=0)
    # pos 1, d = 5: angles 1 / 10000^(0/5) = 1, 1 / 10000^(2/5) = 1 / 39.8107 = 0.0251189,
    # 1 / 10000^(4/5) = 1 / 1584.89 = 0.000630957
    # -> [sin 1, cos 1, sin 0.0251189, cos 0.0251189, sin 0.000630957]
    #  = [0.841471, 0.540302, 0.025116, 0.999685, 0.000631]; the last column is a sine with no cosine partner
    np.testing.assert_allclose(pe[1], [0.841471, 0.540302, 0.025116, 0.999685, 0.000631], atol=1e-6, rtol=0)


def test_pe_d4_interleaved_and_concat_hand_values():
    # pos 2, d = 4: angles 2 / 10000^(0/4) = 2 and 2 / 10000^(2/4) = 2 / 100 = 0.02
    # sin 2 = 0.909297, cos 2 = -0.416147, sin 0.02 = 0.019999, cos 0.02 = 0.999800
    inter = sinusoidal_table(10, 4, "interleaved")
    np.testing.assert_allclose(inter[2], [0.909297, -0.416147, 0.019999, 0.999800], atol=1e-6, rtol=0)
    concat = sinusoidal_table(10, 4, "concat")  # same frequencies, sines first then cosines
    np.testing.assert_allclose(concat[2], [0.909297, 0.019999, -0.416147, 0.999800], atol=1e-6, rtol=0)


@pytest.mark.parametrize("d_model", [1, 2, 5, 8, 33])
def test_pe_formula_at_random_positions(d_model):
    max_len = 300
    inter = sinusoidal_table(max_len, d_model, "interleaved")
    concat = sinusoidal_table(max_len, d_model, "concat")
    n_sin = (d_model + 1) // 2
    rng = np.random.default_rng(d_model)
    for _ in range(25):
        pos = int(rng.integers(0, max_len))
        col = int(rng.integers(0, d_model))
        i = col // 2
        angle = pos / 10000 ** (2 * i / d_model)
        expected = math.sin(angle) if col % 2 == 0 else math.cos(angle)
        assert inter[pos, col] == pytest.approx(expected, abs=1e-6)
        # the same (pos, col) of the interleaved table sits at column i (sine) or n_sin + i (cosine) in concat
        assert concat[pos, i if col % 2 == 0 else n_sin + i] == pytest.approx(expected, abs=1e-6)


def test_pe_is_the_fitted_table_and_float32_of_float64():
    e = fitted(d_model=6, max_len=20)
    np.testing.assert_array_equal(e.positional_encoding_, e.positional_encoding())
    pos = np.arange(20, dtype=np.float64)[:, None]
    ref = np.empty((20, 6))
    for i in range(3):
        ref[:, 2 * i] = np.sin(pos[:, 0] / 10000 ** (2 * i / 6))
        ref[:, 2 * i + 1] = np.cos(pos[:, 0] / 10000 ** (2 * i / 6))
    # rounded once from float64: within half a float32 ulp of the float64 values
    np.testing.assert_allclose(e.positional_encoding_, ref, rtol=0, atol=6e-8)


# -- token table ------------------------------------------------------------------------------------------------
def test_token_table_shape_dtype_and_padding_row():
    e = fitted(d_model=5, max_len=10, vocab_size=30, padding_idx=3)
    assert e.token_table_.shape == (30, 5) and e.token_table_.dtype == np.float32
    assert not e.token_table_[3].any()
    assert np.all(np.abs(e.token_table_[np.arange(30) != 3]).sum(axis=1) > 0)
    # a padded position embeds to exactly its positional vector
    out = e.embed(np.array([[7, 3, 3]]))
    np.testing.assert_array_equal(out[0, 1], e.positional_encoding_[1])
    np.testing.assert_array_equal(out[0, 2], e.positional_encoding_[2])


def test_token_table_is_seeded_numpy_normal_with_std_d_model_inv_sqrt():
    e = fitted(d_model=64, vocab_size=2000, seed=7)
    ref = np.random.default_rng(7).normal(0.0, 64 ** -0.5, size=(2000, 64)).astype(np.float32)
    np.testing.assert_array_equal(e.token_table_, ref)
    # 128,000 draws: the sample std is within 1% of 1/8 = 0.125
    assert e.token_table_.std() == pytest.approx(0.125, rel=0.01)


def test_seed_reproducibility():
    a = fitted(d_model=8, seed=1).token_table_
    b = fitted(d_model=8, seed=1).token_table_
    c = fitted(d_model=8, seed=2).token_table_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# -- embed ------------------------------------------------------------------------------------------------------
def test_embed_scale_and_shapes():
    ids = np.array([[1, 2, 3, 4], [5, 6, 7, 0]], dtype=np.int32)
    e = fitted(d_model=16, max_len=8, seed=3)
    out = e.embed(ids)
    assert out.shape == (2, 4, 16) and out.dtype == np.float32
    # sqrt(16) = 4: token part is exactly 4 * table (a power of two), so the subtraction below is exact up to
    # the rounding of the sum
    np.testing.assert_allclose(out - e.positional_encoding_[:4], e.token_table_[ids] * 4.0, atol=1e-6, rtol=0)
    plain = fitted(d_model=16, max_len=8, seed=3, scale_embeddings=False)
    assert plain.scale_ == 1.0 and e.scale_ == 4.0
    np.testing.assert_allclose(
        plain.embed(ids), e.token_table_[ids] + e.positional_encoding_[:4], atol=1e-6, rtol=0
    )
    # 1-D input is one sequence
    np.testing.assert_array_equal(e.embed(ids[1]), out[1])
    np.testing.assert_array_equal(e.embed([5, 6, 7, 0]), out[1])
    assert e.embed(np.zeros((3, 0), np.int64)).shape == (3, 0, 16)


def test_embed_odd_d_model_non_power_of_two_scale():
    e = fitted(d_model=5, max_len=10, vocab_size=12, padding_idx=0)
    ids = np.array([[4, 11, 0]])
    out = e.embed(ids)
    assert out.shape == (1, 3, 5)
    np.testing.assert_allclose(
        out[0], e.token_table_[[4, 11, 0]] * math.sqrt(5) + e.positional_encoding_[:3], atol=1e-6, rtol=0
    )


def test_embed_errors():
    e = fitted(d_model=4, max_len=6, vocab_size=10)
    with pytest.raises(TokembedError, match=r"sequence length 7 .* max_len=6"):
        e.embed(np.zeros((2, 7), np.int64))
    with pytest.raises(TokembedError, match=r"id 10 at position \(1, 2\) is outside the vocabulary \[0, 10\)"):
        e.embed([[0, 1, 2], [3, 4, 10]])
    with pytest.raises(TokembedError, match="id -1"):
        e.embed([-1, 2])
    with pytest.raises(TokembedError, match="integer dtype"):
        e.embed(np.array([[1.0, 2.0]]))
    with pytest.raises(TokembedError, match="integer dtype"):
        e.embed(np.array([True, False]))
    with pytest.raises(TokembedError, match="shape"):
        e.embed(np.zeros((1, 2, 3), np.int64))
    with pytest.raises(TokembedError, match="rectangular"):
        e.embed([[1, 2], [3]])
    # the longest allowed sequence works
    assert e.embed(np.zeros(6, np.int64)).shape == (6, 4)


def test_not_fitted():
    e = SinusoidalEmbedder(d_model=4, vocab_size=10)
    for call in (lambda: e.embed([1, 2]), e.to_torch, lambda: e.save("never.json")):
        with pytest.raises(NotFittedError, match="fit"):
            call()
    # the positional table needs no fit
    assert e.positional_encoding().shape == (512, 4)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"d_model": 0}, "d_model must be an int >= 1, got 0"),
        ({"d_model": 4.0}, "d_model must be an int"),
        ({"max_len": 0}, "max_len must be an int >= 1, got 0"),
        ({"dropout": 1.0}, r"dropout must be a number in \[0, 1\), got 1.0"),
        ({"dropout": -0.1}, r"dropout must be a number in \[0, 1\), got -0.1"),
        ({"dropout": float("nan")}, r"dropout must be a number in \[0, 1\), got nan"),
        ({"vocab_size": None}, "vocab_size is required"),
        ({"vocab_size": 0}, "vocab_size must be an int >= 1"),
        ({"padding_idx": 10}, r"padding_idx=10 is outside the vocabulary \[0, 10\)"),
        ({"padding_idx": -1}, "padding_idx must be an int >= 0"),
        ({"layout": "sincos"}, "layout must be one of 'interleaved', 'concat', got 'sincos'"),
        ({"scale_embeddings": "yes"}, "scale_embeddings must be true or false"),
        ({"seed": -1}, "seed must be an int >= 0"),
    ],
)
def test_fit_validates_parameters(params, message):
    base = {"d_model": 4, "max_len": 8, "vocab_size": 10}
    with pytest.raises(TokembedError, match=message):
        SinusoidalEmbedder(**{**base, **params}).fit()


def test_two_bad_values_are_both_reported():
    bad = {"d_model": 0, "dropout": 1.0}
    assert SinusoidalEmbedder.check_params(bad) == [
        ("d_model", "sinusoidal: d_model must be an int >= 1, got 0"),
        ("dropout", "sinusoidal: dropout must be a number in [0, 1), got 1.0"),
    ]
    with pytest.raises(ParameterError) as info:  # fit: every problem in one error
        SinusoidalEmbedder(vocab_size=10, **bad).fit()
    assert [e.param for e in info.value.errors] == ["d_model", "dropout"]
    # the positional table alone is checked by the same declarations
    with pytest.raises(ParameterError, match=r"^sinusoidal: 2 invalid parameters: d_model must be an int >= 1, got "
                                             r"0; layout must be one of 'interleaved', 'concat', got 'sincos'$"):
        sinusoidal_table(4, 0, "sincos")


def test_an_unset_vocab_size_waits_for_the_run_but_bounds_padding_idx_once_set():
    # a recipe run passes the tokenizer's vocab_size: validate reports nothing without it, fit requires it
    assert SinusoidalEmbedder.check_params({"padding_idx": 3}) == []
    assert SinusoidalEmbedder.check_params({"padding_idx": 3, "vocab_size": 3}) == [
        ("padding_idx", "sinusoidal: padding_idx=3 is outside the vocabulary [0, 3)")]
    with pytest.raises(ParameterError, match="vocab_size is required"):
        SinusoidalEmbedder(padding_idx=3).fit()


def test_params_are_stored_unchanged_and_fit_ignores_x():
    params = dict(d_model=6, max_len=9, layout="concat", scale_embeddings=False, dropout=0.25, seed=4,
                  vocab_size=11, padding_idx=2)
    e = SinusoidalEmbedder(**params)
    assert e.get_params() == params
    assert e.fit([["some", "tokens"], ["more"]]) is e
    assert e.get_params() == params
    np.testing.assert_array_equal(e.token_table_, SinusoidalEmbedder(**params).fit().token_table_)


# -- save / load ------------------------------------------------------------------------------------------------
def test_save_load_bit_identical(tmp_path):
    e = fitted(d_model=7, max_len=12, vocab_size=40, padding_idx=1, layout="concat", seed=9)
    path = e.save(tmp_path / "pos.tokembed.json")
    state = json.loads(path.read_text())["state"]["token_table"]
    assert state["dtype"] == "<f4" and state["shape"] == [40, 7] and isinstance(state["data"], str)
    loaded = SinusoidalEmbedder.load(path)
    assert loaded.get_params() == e.get_params()
    assert loaded.token_table_.dtype == np.float32 and loaded.token_table_.flags.writeable
    np.testing.assert_array_equal(loaded.token_table_, e.token_table_)
    ids = np.random.default_rng(0).integers(0, 40, size=(3, 12))
    assert loaded.embed(ids).tobytes() == e.embed(ids).tobytes()


def test_load_rejects_a_table_of_the_wrong_shape(tmp_path):
    e = fitted(d_model=4, max_len=8, vocab_size=10)
    path = e.save(tmp_path / "e.tokembed.json")
    data = json.loads(path.read_text())
    data["params"]["vocab_size"] = 11
    path.write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match=r"shape \(10, 4\)"):
        SinusoidalEmbedder.load(path)
    data["params"]["vocab_size"] = 10
    data["state"]["token_table"]["data"] = data["state"]["token_table"]["data"][:-8]
    path.write_text(json.dumps(data))
    with pytest.raises(ArtifactError):
        SinusoidalEmbedder.load(path)


# -- registry ---------------------------------------------------------------------------------------------------
def test_registered_by_the_plugin_and_imports_no_torch():
    code = (
        "import sys\n"
        "from tokembed import build_registry\n"
        "reg = build_registry(autoload=False, plugins=['tokembed.plugins.sinusoidal'])\n"
        "cls = reg.get('embedder', 'sinusoidal')\n"
        "cls(d_model=4, vocab_size=5).fit().embed([[1, 2]])\n"
        "print(cls.__module__, 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["tokembed.plugins.sinusoidal.embedder", "False"]


def test_registry_gives_the_class():
    reg = build_registry(autoload=False, plugins=["tokembed.plugins.sinusoidal"])
    assert reg.get("embedder", "sinusoidal") is SinusoidalEmbedder


# -- torch ------------------------------------------------------------------------------------------------------
def test_torch_parity_in_eval_mode():
    torch = pytest.importorskip("torch")
    for params in (dict(d_model=5, padding_idx=0), dict(d_model=16, layout="concat", scale_embeddings=False)):
        e = fitted(max_len=12, vocab_size=30, seed=5, **params)
        module = e.to_torch()
        assert module.training  # torch's default
        module.eval()
        ids = np.random.default_rng(1).integers(0, 30, size=(4, 9))
        with torch.no_grad():
            got = module(torch.from_numpy(ids)).numpy()
            got_1d = module(torch.from_numpy(ids[2])).numpy()
        assert got.dtype == np.float32 and got.shape == (4, 9, params["d_model"])
        np.testing.assert_allclose(got, e.embed(ids), atol=1e-6, rtol=0)
        np.testing.assert_allclose(got_1d, e.embed(ids[2]), atol=1e-6, rtol=0)
        with pytest.raises(TokembedError, match="sequence length 13 .* max_len=12"):
            module(torch.zeros((1, 13), dtype=torch.long))


def test_torch_dropout_active_in_train_and_inactive_in_eval():
    torch = pytest.importorskip("torch")
    e = fitted(d_model=32, max_len=64, vocab_size=100, dropout=0.5, seed=2)
    module = e.to_torch()
    ids = torch.from_numpy(np.random.default_rng(3).integers(0, 100, size=(8, 64)))
    reference = e.embed(ids.numpy())
    torch.manual_seed(0)
    with torch.no_grad():
        train_out = module.train()(ids).numpy()
        eval_out = module.eval()(ids).numpy()
    np.testing.assert_allclose(eval_out, reference, atol=1e-6, rtol=0)
    dropped = train_out == 0
    # p = 0.5 over 16,384 values: the dropped fraction is 0.5 +- a few 0.004 standard deviations
    assert 0.45 < dropped.mean() < 0.55
    # the kept values are scaled by 1 / (1 - p) = 2
    np.testing.assert_allclose(train_out[~dropped], 2.0 * reference[~dropped], atol=1e-5, rtol=1e-6)


def test_torch_padding_row_gets_no_gradient_and_freeze():
    torch = pytest.importorskip("torch")
    e = fitted(d_model=4, max_len=8, vocab_size=10, padding_idx=0, dropout=0.0)
    module = e.to_torch()
    module(torch.tensor([[0, 3, 0, 5]])).sum().backward()
    grad = module.token.weight.grad
    assert not grad[0].any() and grad[3].abs().sum() > 0 and not grad[1].any()
    # the buffer is not a parameter and not in the state dict; the token weights are
    assert [name for name, _ in module.named_parameters()] == ["token.weight"]
    assert list(module.state_dict()) == ["token.weight"]
    frozen = e.to_torch(freeze=True)
    assert not frozen.token.weight.requires_grad
    # the module owns a copy: training it does not change the embedder
    with torch.no_grad():
        module.token.weight.add_(1.0)
    assert not e.token_table_[0].any()
