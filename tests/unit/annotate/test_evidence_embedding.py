"""The MiniLM embedder that scores patterns (docs/evidence.md, "Scores")."""

from __future__ import annotations

import numpy as np

from annotate.evidence.embedding import centroid, embed, model_dir


def test_embeddings_are_mean_pooled_unit_vectors_whatever_the_batch() -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    texts = ["The capital of France is", "Bananas are yellow fruit that grow in bunches.", "a"]
    batched = embed(texts)
    assert batched.shape == (3, 384)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    # Each text alone, pooled plainly over its own tokens: padding in the batch must not
    # change a row.
    tokenizer = AutoTokenizer.from_pretrained(model_dir())
    model = AutoModel.from_pretrained(model_dir()).eval()
    for text, row in zip(texts, batched, strict=True):
        with torch.inference_mode():
            hidden = model(**tokenizer(text, return_tensors="pt")).last_hidden_state[0]
        plain = hidden.mean(dim=0).numpy()
        plain /= np.linalg.norm(plain)
        assert np.allclose(row, plain, atol=1e-5)


def test_related_sentences_are_closer_than_unrelated_ones() -> None:
    a, b, c = embed(
        ["Paris is the capital of France.", "France's capital city is Paris.", "I fed the cat."]
    )
    assert a @ b > a @ c + 0.3


def test_centroid_is_the_unit_mean() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert np.allclose(centroid(vectors), [2**-0.5, 2**-0.5])
    assert np.allclose(centroid(np.zeros((2, 2), dtype=np.float32)), 0.0)
