"""Post-processing of encodings: special-token templates, truncation with overflowing windows, padding.

This is the last stage of Hugging Face tokenizers' pipeline (normalizer -> pre-tokenizer -> model ->
post-processor), with its semantics:

- :class:`TemplateProcessing` is HF's ``tokenizers.processors.TemplateProcessing``: a template for one text
  (``"[CLS] $A [SEP]"``) and one for a pair (``"[CLS] $A [SEP] $B:1 [SEP]:1"``), where ``$A``/``$B`` are the two
  texts and ``:n`` sets the type id. Added tokens get offsets ``(0, 0)`` and ``special_tokens_mask`` 1.
- :func:`truncate` is HF's ``truncate_encodings`` (strategies ``longest_first``, ``only_first``, ``only_second``,
  the names transformers uses) and ``Encoding.truncate``: the kept window and the cut-off tokens as windows of the
  same length that overlap by ``stride`` tokens.
- :func:`pad` is HF's ``Encoding.pad``: pad tokens have type id 0, offsets ``(0, 0)``, attention mask 0 and
  ``special_tokens_mask`` 1; overflowing windows are padded too.

:class:`EncodeOptions` validates the per-call options of :meth:`tokembed.Tokenizer.encode` once per call; it is
immutable, so one tokenizer serves several threads. Nothing here writes into the encodings it receives: results
are new :class:`~tokembed.encoding.Encoding` objects.

References: Hugging Face tokenizers (``tokenizers/src/processors/template.rs``,
``tokenizers/src/utils/truncation.rs``, ``tokenizers/src/tokenizer/encoding.rs``) and transformers'
``PreTrainedTokenizerBase.__call__`` (``truncation=``, ``padding=``, ``stride=``).
"""

from .options import _check_str  # noqa: F401 - for the Tokenizer base class
from .options import EncodeOptions, batch_result, check_batch_inputs, resolve_workers
from .template import DEFAULT_TEMPLATE, POST_PROCESSOR_SPEC, TemplateProcessing, template_from_hf, template_to_hf
from .truncation import TRUNCATION_STRATEGIES, combine, pad, padding_length, truncate

__all__ = [
    "TemplateProcessing",
    "EncodeOptions",
    "TRUNCATION_STRATEGIES",
    "truncate",
    "combine",
    "pad",
    "padding_length",
    "check_batch_inputs",
    "batch_result",
    "resolve_workers",
    "DEFAULT_TEMPLATE",
    "POST_PROCESSOR_SPEC",
    "template_from_hf",
    "template_to_hf",
]
