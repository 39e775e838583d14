"""SentencePiece's ``ModelProto`` (the ``.model`` file) as protobuf message classes built at run time.

The schema is SentencePiece's ``sentencepiece_model.proto`` (proto2, package ``sentencepiece``): the field names,
numbers, types and defaults below are that file format, written here as a table from which a
``FileDescriptorProto`` is assembled, so no generated code is committed and no ``protoc`` is needed. Parsing and
serializing are the ``protobuf`` library's; fields this table does not list (newer SentencePiece versions,
extensions) are kept as unknown fields, so a file read and written back keeps them.

Only :func:`message_classes` touches ``google.protobuf``; it is imported on first use.
"""

from __future__ import annotations

import functools
from typing import Any

from tokembed.errors import TokembedError

__all__ = ["message_classes", "PIECE_NORMAL", "PIECE_UNKNOWN", "PIECE_CONTROL", "PIECE_USER_DEFINED",
           "PIECE_UNUSED", "PIECE_BYTE", "MODEL_UNIGRAM", "MODEL_BPE", "MODEL_WORD", "MODEL_CHAR"]

# ModelProto.SentencePiece.Type
PIECE_NORMAL, PIECE_UNKNOWN, PIECE_CONTROL, PIECE_USER_DEFINED, PIECE_UNUSED, PIECE_BYTE = 1, 2, 3, 4, 5, 6
# TrainerSpec.ModelType
MODEL_UNIGRAM, MODEL_BPE, MODEL_WORD, MODEL_CHAR = 1, 2, 3, 4

# (name, number, type, label, default or None, enum type name or None); labels: "o" optional, "r" repeated
_TRAINER_SPEC = [
    ("input", 1, "string", "r", None, None),
    ("input_format", 7, "string", "o", None, None),
    ("model_prefix", 2, "string", "o", None, None),
    ("model_type", 3, "enum", "o", "UNIGRAM", "ModelType"),
    ("vocab_size", 4, "int32", "o", "8000", None),
    ("accept_language", 5, "string", "r", None, None),
    ("self_test_sample_size", 6, "int32", "o", "0", None),
    ("character_coverage", 10, "float", "o", "0.9995", None),
    ("input_sentence_size", 11, "uint64", "o", "0", None),
    ("mining_sentence_size", 12, "int32", "o", None, None),
    ("training_sentence_size", 13, "int32", "o", None, None),
    ("seed_sentencepiece_size", 14, "int32", "o", "1000000", None),
    ("shrinking_factor", 15, "float", "o", "0.75", None),
    ("num_threads", 16, "int32", "o", "16", None),
    ("num_sub_iterations", 17, "int32", "o", "2", None),
    ("max_sentence_length", 18, "int32", "o", "4192", None),
    ("shuffle_input_sentence", 19, "bool", "o", "true", None),
    ("max_sentencepiece_length", 20, "int32", "o", "16", None),
    ("split_by_unicode_script", 21, "bool", "o", "true", None),
    ("split_by_whitespace", 22, "bool", "o", "true", None),
    ("split_by_number", 23, "bool", "o", "true", None),
    ("treat_whitespace_as_suffix", 24, "bool", "o", "false", None),
    ("split_digits", 25, "bool", "o", "false", None),
    ("allow_whitespace_only_pieces", 26, "bool", "o", "false", None),
    ("control_symbols", 30, "string", "r", None, None),
    ("user_defined_symbols", 31, "string", "r", None, None),
    ("vocabulary_output_piece_score", 32, "bool", "o", "true", None),
    ("hard_vocab_limit", 33, "bool", "o", "true", None),
    ("use_all_vocab", 34, "bool", "o", "false", None),
    ("byte_fallback", 35, "bool", "o", "false", None),
    ("required_chars", 36, "string", "o", None, None),
    ("unk_id", 40, "int32", "o", "0", None),
    ("bos_id", 41, "int32", "o", "1", None),
    ("eos_id", 42, "int32", "o", "2", None),
    ("pad_id", 43, "int32", "o", "-1", None),
    ("unk_surface", 44, "string", "o", " \u2047 ", None),
    ("unk_piece", 45, "string", "o", "<unk>", None),
    ("bos_piece", 46, "string", "o", "<s>", None),
    ("eos_piece", 47, "string", "o", "</s>", None),
    ("pad_piece", 48, "string", "o", "<pad>", None),
    ("train_extremely_large_corpus", 49, "bool", "o", "false", None),
    ("enable_differential_privacy", 50, "bool", "o", "false", None),
    ("differential_privacy_noise_level", 51, "float", "o", "0", None),
    ("differential_privacy_clipping_threshold", 52, "uint64", "o", "0", None),
    ("pretokenization_delimiter", 53, "string", "o", "", None),
    ("seed_sentencepieces_file", 54, "string", "o", "", None),
    ("auto_character_coverage", 55, "bool", "o", "false", None),
]
_NORMALIZER_SPEC = [
    ("name", 1, "string", "o", None, None),
    ("precompiled_charsmap", 2, "bytes", "o", None, None),
    ("add_dummy_prefix", 3, "bool", "o", "true", None),
    ("remove_extra_whitespaces", 4, "bool", "o", "true", None),
    ("escape_whitespaces", 5, "bool", "o", "true", None),
    ("normalization_rule_tsv", 6, "string", "o", None, None),
]
_SENTENCE_PIECE = [
    ("piece", 1, "string", "o", None, None),
    ("score", 2, "float", "o", None, None),
    ("type", 3, "enum", "o", "NORMAL", "Type"),
]
_MODEL_PROTO = [
    ("pieces", 1, "message", "r", None, ".sentencepiece.ModelProto.SentencePiece"),
    ("trainer_spec", 2, "message", "o", None, ".sentencepiece.TrainerSpec"),
    ("normalizer_spec", 3, "message", "o", None, ".sentencepiece.NormalizerSpec"),
    ("denormalizer_spec", 5, "message", "o", None, ".sentencepiece.NormalizerSpec"),
]
_ENUMS = {
    "ModelType": [("UNIGRAM", 1), ("BPE", 2), ("WORD", 3), ("CHAR", 4)],
    "Type": [("NORMAL", 1), ("UNKNOWN", 2), ("CONTROL", 3), ("USER_DEFINED", 4), ("BYTE", 6), ("UNUSED", 5)],
}


def _add_fields(message: Any, fields: list, scope: str, descriptor_pb2: Any) -> None:
    F = descriptor_pb2.FieldDescriptorProto
    types = {"string": F.TYPE_STRING, "bytes": F.TYPE_BYTES, "bool": F.TYPE_BOOL, "int32": F.TYPE_INT32,
             "uint64": F.TYPE_UINT64, "float": F.TYPE_FLOAT, "enum": F.TYPE_ENUM, "message": F.TYPE_MESSAGE}
    for name, number, kind, label, default, type_name in fields:
        field = message.field.add()
        field.name, field.number, field.type = name, number, types[kind]
        field.label = F.LABEL_REPEATED if label == "r" else F.LABEL_OPTIONAL
        if kind == "enum":
            field.type_name = f"{scope}.{type_name}"
        elif kind == "message":
            field.type_name = type_name
        if default is not None:
            field.default_value = default
    message.extension_range.add(start=200, end=536870912)


@functools.lru_cache(maxsize=1)
def message_classes() -> dict[str, type]:
    """The message classes ``ModelProto``, ``TrainerSpec`` and ``NormalizerSpec`` (built once per process).

    Raises
    ------
    TokembedError
        If the ``protobuf`` package is not installed (the message says how to install it).
    """
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise TokembedError("unigram: reading and writing SentencePiece .model files needs the `protobuf` package "
                            "(pip install protobuf)") from None
    fdp = descriptor_pb2.FileDescriptorProto(name="tokembed_sentencepiece_model.proto", package="sentencepiece",
                                             syntax="proto2")
    trainer = fdp.message_type.add(name="TrainerSpec")
    trainer.enum_type.add(name="ModelType").value.extend(
        descriptor_pb2.EnumValueDescriptorProto(name=n, number=v) for n, v in _ENUMS["ModelType"])
    _add_fields(trainer, _TRAINER_SPEC, ".sentencepiece.TrainerSpec", descriptor_pb2)
    normalizer = fdp.message_type.add(name="NormalizerSpec")
    _add_fields(normalizer, _NORMALIZER_SPEC, ".sentencepiece.NormalizerSpec", descriptor_pb2)
    model = fdp.message_type.add(name="ModelProto")
    piece = model.nested_type.add(name="SentencePiece")
    piece.enum_type.add(name="Type").value.extend(
        descriptor_pb2.EnumValueDescriptorProto(name=n, number=v) for n, v in _ENUMS["Type"])
    _add_fields(piece, _SENTENCE_PIECE, ".sentencepiece.ModelProto.SentencePiece", descriptor_pb2)
    _add_fields(model, _MODEL_PROTO, ".sentencepiece.ModelProto", descriptor_pb2)
    model.reserved_range.add(start=4, end=5)
    pool = descriptor_pool.DescriptorPool()  # our own pool: no clash with sentencepiece's generated module
    pool.Add(fdp)
    out = {}
    for name in ("ModelProto", "TrainerSpec", "NormalizerSpec"):
        out[name] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"sentencepiece.{name}"))
    return out
