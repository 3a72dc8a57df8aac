"""A SentencePiece BPE model as the Llama 2 style ``tokenizer.json`` that transformers converts it to:
merges ordered by the score (id) of the piece they make, byte fallback, Prepend/Replace ``▁`` and the
matching decoder. Shared by the engine's and the app's SentencePiece tests."""

from __future__ import annotations

from pathlib import Path


def llama2_style_tokenizer_json(model_file: Path, path: Path) -> Path:
    """Write the ``tokenizer.json`` of ``model_file`` (a SentencePiece BPE ``.model``) to ``path``."""
    import sentencepiece as spm
    import tokenizers as hf_tokenizers

    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    merges = sorted(
        (i, piece[:k], piece[k:])
        for piece, i in vocab.items()
        if not (sp.is_byte(i) or sp.is_control(i) or sp.is_unknown(i))
        for k in range(1, len(piece))
        if piece[:k] in vocab and piece[k:] in vocab
    )
    models, normalizers, decoders = hf_tokenizers.models, hf_tokenizers.normalizers, hf_tokenizers.decoders
    model = models.BPE(
        vocab=vocab,
        merges=[(a, b) for _, a, b in merges],
        unk_token="<unk>",
        byte_fallback=True,
        fuse_unk=True,
    )
    tok = hf_tokenizers.Tokenizer(model)
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    tok.save(str(path))
    return path
