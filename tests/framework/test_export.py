"""`tokembed export`, a recipe tokenizer's `export:` list, `{load: {vocab, merges}}` in compare recipes, and
`tokembed run --no-metrics` (issue 12, items 2 and 8)."""

from __future__ import annotations

import json
import textwrap
import warnings

import pytest

from tokembed.cli import main
from tokembed.corpus import Corpus
from tokembed.errors import RecipeError
from tokembed.plugins.bpe.tokenizer import BPETokenizer
from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer
from tokembed.recipe import load_recipe
from tokembed.registry import build_registry
from tokembed.runner import run_recipe

tokenizers = pytest.importorskip("tokenizers")
tiktoken = pytest.importorskip("tiktoken")

LINES = Corpus.builtin("moby-dick").head(6000)
TRAIN, HELD = LINES[:3000], LINES[3000:3400] + ["naïve café 東京 😀 1234567 it's", "  spaced\ttabs\r\n"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bpe = BPETokenizer(vocab_size=1200, byte_level=True, special_tokens=["<|endoftext|>"],
                           pad_token="<pad>").fit(TRAIN)
        wp = WordPieceTokenizer(vocab_size=1200).fit(TRAIN)
    bpe.save(folder / "bpe.tokembed.json")
    wp.save(folder / "wp.tokembed.json")
    return folder, bpe, wp


def ids(tok, texts):
    return [tok.encode(t).ids.tolist() for t in texts]


def test_export_hf_and_vocab_merges_read_back_to_the_same_ids(saved, tmp_path, capsys):
    folder, bpe, _ = saved
    assert main(["export", str(folder / "bpe.tokembed.json"), "--to", "hf", "--out", str(tmp_path) + "/"]) == 0
    assert f"wrote {tmp_path / 'tokenizer.json'}" in capsys.readouterr().out
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [e.ids for e in hf.encode_batch(HELD, add_special_tokens=False)] == ids(bpe, HELD)
    assert main(["export", str(folder / "bpe.tokembed.json"), "--to", "vocab-merges", "--out",
                 str(tmp_path / "vm")]) == 0
    again = BPETokenizer.from_vocab_merges(tmp_path / "vm" / "vocab.json", tmp_path / "vm" / "merges.txt")
    assert ids(again, HELD) == ids(bpe, HELD)


def test_export_tiktoken_keeps_our_ids_as_ranks(saved, tmp_path, capsys):
    from tiktoken.load import load_tiktoken_bpe

    folder, bpe, _ = saved
    out = tmp_path / "bpe.tiktoken"
    assert main(["export", str(folder / "bpe.tokembed.json"), "--to", "tiktoken", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    spec = bpe.tiktoken_spec()
    assert spec["special_tokens"] == {"<pad>": 0, "<|endoftext|>": 1} and "special_tokens=" in printed
    ranks = load_tiktoken_bpe(str(out))
    assert min(ranks.values()) == 2 and len(ranks) == bpe.get_vocab_size() - 2  # the specials' ids are gaps
    enc = tiktoken.Encoding("exported", pat_str=spec["pat_str"], mergeable_ranks=ranks,
                            special_tokens=spec["special_tokens"])
    assert [enc.encode_ordinary(t) for t in HELD] == ids(bpe, HELD)
    again = BPETokenizer.from_tiktoken(out, special_tokens=spec["special_tokens"])
    assert again.get_vocab() == bpe.get_vocab() and ids(again, HELD) == ids(bpe, HELD)


def test_export_vocab_txt_and_formats_a_tokenizer_lacks(saved, tmp_path, capsys):
    folder, _, wp = saved
    assert main(["export", str(folder / "wp.tokembed.json"), "--to", "vocab-txt", "--out",
                 str(tmp_path / "vocab.txt")]) == 0
    assert ids(WordPieceTokenizer.from_vocab_file(tmp_path / "vocab.txt"), HELD) == ids(wp, HELD)
    capsys.readouterr()
    assert main(["export", str(folder / "wp.tokembed.json"), "--to", "tiktoken", "--out", str(tmp_path / "x")]) == 2
    assert "has no to_tiktoken(), so it cannot be written as tiktoken BPE ranks; it can be exported as hf, " \
           "vocab-txt" in capsys.readouterr().err
    char_level = BPETokenizer(vocab_size=300, end_of_word_suffix="</w>").fit(TRAIN[:200])
    char_level.save(tmp_path / "c.tokembed.json")
    assert main(["export", str(tmp_path / "c.tokembed.json"), "--to", "tiktoken", "--out", str(tmp_path / "x")]) == 2
    assert "needs byte_level: true" in capsys.readouterr().err
    # and the formats it is offered instead leave out tiktoken, which it would refuse
    assert main(["export", str(tmp_path / "c.tokembed.json"), "--to", "vocab-txt", "--out",
                 str(tmp_path / "v.txt")]) == 2
    assert capsys.readouterr().err.rstrip().endswith("it can be exported as hf, vocab-merges")
    from tokembed.plugins.sinusoidal.embedder import SinusoidalEmbedder

    SinusoidalEmbedder(d_model=4, vocab_size=10).fit(None).save(tmp_path / "pos.tokembed.json")
    assert main(["export", str(tmp_path / "pos.tokembed.json"), "--to", "hf", "--out", str(tmp_path) + "/"]) == 2
    assert "holds an embedder, not a tokenizer; tokembed export writes tokenizers" in capsys.readouterr().err


def _recipe(tmp_path, body: str):
    (tmp_path / "corpus.txt").write_text("\n".join(TRAIN[:800]) + "\n", encoding="utf-8")
    path = tmp_path / "r.yaml"
    path.write_text("corpus: {path: corpus.txt}\n" + textwrap.dedent(body), encoding="utf-8")
    return path


def test_a_recipe_export_list_writes_the_formats_into_the_run_folder(tmp_path):
    path = _recipe(tmp_path, """\
        tokenizers:
          gpt: {type: bpe, byte_level: true, vocab_size: 500, export: [hf, tiktoken, vocab-merges]}
          wp: {type: wordpiece, vocab_size: 500, export: [vocab-txt, hf]}
        """)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_recipe(path, out=tmp_path / "out", registry=build_registry(), quiet=True)
    out = tmp_path / "out"
    for name in ("gpt.tokenizer.json", "gpt.tiktoken", "gpt.vocab.json", "gpt.merges.txt", "wp.vocab.txt",
                 "wp.tokenizer.json"):
        assert (out / name).is_file(), name
    assert name in json.loads((out / ".tokembed-run").read_text())["files"]
    hf = tokenizers.Tokenizer.from_file(str(out / "gpt.tokenizer.json"))
    assert hf.encode(HELD[0]).ids == result.tokenizers["gpt"].encode(HELD[0]).ids.tolist()
    assert "export: [hf, tiktoken, vocab-merges]" in (out / "recipe.resolved.yaml").read_text() or \
        "- tiktoken" in (out / "recipe.resolved.yaml").read_text()


def test_validate_checks_the_export_list_before_training(tmp_path):
    path = _recipe(tmp_path, """\
        tokenizers:
          chars: {type: bpe, vocab_size: 500, export: [tiktoken, hf]}
          plain: {type: char, export: [hf]}
          typo: {type: bpe, export: [hugging]}
        embedders:
          pos: {type: sinusoidal, input: chars, d_model: 8, export: [hf]}
        """)
    with pytest.raises(RecipeError) as info:
        load_recipe(path, registry=build_registry())
    msg = str(info.value)
    assert "tokenizers.chars.export[0]: bpe: a tiktoken export needs byte_level: true" in msg
    assert "tokenizers.plain.export[0]: tokenizer 'char'" in msg and "has no to_hf_json()" in msg
    assert "tokenizers.typo.export[0]: unknown export format 'hugging'" in msg
    assert "embedders.pos.export: not used by embedders" in msg


def test_compare_recipe_loads_a_vocab_json_and_merges_txt_pair(saved, tmp_path):
    _, bpe, _ = saved
    bpe.to_vocab_merges(tmp_path / "vocab.json", tmp_path / "merges.txt")
    (tmp_path / "c.txt").write_text("\n".join(HELD) + "\n", encoding="utf-8")
    path = tmp_path / "cmp.yaml"
    path.write_text(textwrap.dedent("""\
        compare:
          tokenizers:
            gpt: {load: {vocab: vocab.json, merges: merges.txt}, special_tokens: ["<|endoftext|>"]}
            missing: {load: {vocab: vocab.json}}
          corpora:
            held: {path: c.txt}
        """), encoding="utf-8")
    with pytest.raises(RecipeError, match=r"compare.tokenizers.missing.load.merges: missing: the merges file"):
        load_recipe(path, registry=build_registry())
    path.write_text(path.read_text().replace("    missing: {load: {vocab: vocab.json}}\n", ""), encoding="utf-8")
    recipe = load_recipe(path, registry=build_registry())
    tok, _ = recipe.kept["gpt"]
    assert ids(tok, HELD) == ids(bpe, HELD)
    spec = recipe.compare.tokenizers[0]
    assert spec.as_dict()["load"] == {"vocab": str(tmp_path / "vocab.json"), "merges": str(tmp_path / "merges.txt")}


def test_run_no_metrics_trains_and_writes_without_measuring(tmp_path, capsys):
    path = _recipe(tmp_path, """\
        tokenizers:
          words: {type: word}
        """)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-metrics"]) == 0
    out = tmp_path / "out"
    assert (out / "words.tokembed.json").is_file() and not (out / "metrics.json").exists()
    assert not any(k.startswith("evaluate tokenizer") for k in json.loads((out / "timings.json").read_text()))
    assert "not measured: --no-metrics" in capsys.readouterr().out


def test_run_says_when_metrics_took_most_of_its_time(tmp_path):
    from tokembed.runner import RunResult
    from tokembed.tables import summary_table

    result = RunResult(tmp_path)
    # 30.8 s of metrics against 2.0 s of training (issue 24's 16k byte-level BPE run): more than half the run
    result.timings = {"fit tokenizer bpe": {"seconds": 2.0}, "evaluate tokenizer bpe": {"seconds": 30.8}}
    assert "metrics took 30.8 s of the run's 32.8 s; tokembed run --no-metrics skips them" in summary_table(result)
    # 3 s of metrics in a 10 s run: not the bulk of it, nothing said
    result.timings = {"fit tokenizer bpe": {"seconds": 7.0}, "evaluate tokenizer bpe": {"seconds": 3.0}}
    assert "--no-metrics" not in summary_table(result)
