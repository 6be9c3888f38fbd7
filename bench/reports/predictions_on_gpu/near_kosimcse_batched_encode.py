# Source: https://github.com/BM-K/Sentence-Embedding-Is-All-You-Need/issues/8
# Report: embedding ~3000 sentences in batches with the KoSimCSE quick-tour code ran out of GPU memory; the maintainer pointed at GPU tensors appended to the embeddings list (fix: .cpu().detach().numpy())
# Shape: fixed variant: same chunked helper, forward under torch.no_grad() and each chunk appended as .cpu().numpy() (the fix the reporter confirmed)
# Expect: near-miss: must be silent
import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

MODEL_NAME = "BM-K/KoSimCSE-roberta-multitask"


def cal_score(a, b):
    if len(a.shape) == 1:
        a = a.unsqueeze(0)
    if len(b.shape) == 1:
        b = b.unsqueeze(0)
    a_norm = a / a.norm(dim=1)[:, None]
    b_norm = b / b.norm(dim=1)[:, None]
    return torch.mm(a_norm, b_norm.transpose(0, 1)) * 100


def load(device="cuda"):
    model = AutoModel.from_pretrained(MODEL_NAME).to(device)
    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
    return model, tokenizer


def embed_docs(model, tokenizer, docs, batch_size=100, device="cuda"):
    model.eval()
    embeddings = []
    for start in range(0, len(docs), batch_size):
        chunk = docs[start:start + batch_size]
        inputs = tokenizer(chunk, padding=True, truncation=True, return_tensors="pt").to(device)
        with torch.no_grad():
            embeddings_batch, _ = model(**inputs, return_dict=False)
        embeddings_batch = embeddings_batch[:, 0]
        embeddings.append(embeddings_batch.cpu().detach().numpy())
        print(f"{start + len(chunk)}/{len(docs)} encoded")
    return torch.from_numpy(np.concatenate(embeddings, axis=0))


if __name__ == "__main__":
    model, tokenizer = load()
    with open("docs.txt", encoding="utf-8") as fh:
        docs = [line.strip() for line in fh if line.strip()]
    doc_emb = embed_docs(model, tokenizer, docs)
    query_emb = embed_docs(model, tokenizer, ["치타가 들판을 가로 질러 먹이를 쫓는다."])
    scores = cal_score(query_emb, doc_emb)
    print(scores.topk(5))
