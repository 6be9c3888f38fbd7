# Source: https://github.com/dbiir/UER-py/pull/113
# Report: the feature-extraction script appended output.cpu() for every batch; the CPU copies still carried autograd history, pinning GPU activations until the fix added .detach()
# Shape: script-style extraction loop after model.eval(), no no_grad; each pooled batch output is kept in a list as a .cpu() copy (graph still attached) and cat-ed once at the end
# Expect: TML001 line 56; TML003 line 55
import argparse

import torch
import torch.nn as nn

from uer.model_loader import load_model
from uer.utils import str2embedding, str2encoder, str2tokenizer


def batch_loader(batch_size, src, seg):
    n = src.size(0)
    for start in range(0, n, batch_size):
        yield src[start:start + batch_size], seg[start:start + batch_size]


class SentenceEncoder(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.embedding = str2embedding[args.embedding](args, len(args.tokenizer.vocab))
        self.encoder = str2encoder[args.encoder](args)
        self.pooling = args.pooling

    def forward(self, src, seg):
        hidden = self.encoder(self.embedding(src, seg), seg)
        if self.pooling == "mean":
            return hidden.mean(dim=1)
        if self.pooling == "max":
            return hidden.max(dim=1)[0]
        if self.pooling == "last":
            return hidden[:, -1, :]
        return hidden[:, 0, :]


def read_ids(args, path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            ids = args.tokenizer.convert_tokens_to_ids(["[CLS]"] + args.tokenizer.tokenize(line))[: args.seq_length]
            ids += [0] * (args.seq_length - len(ids))
            rows.append(ids)
    src = torch.LongTensor(rows)
    return src, (src != 0).long()


def extract(model, src, seg, batch_size, device):
    model.eval()
    feature_vectors = []
    for i, (src_batch, seg_batch) in enumerate(batch_loader(batch_size, src, seg)):
        src_batch = src_batch.to(device)
        seg_batch = seg_batch.to(device)
        output = model(src_batch, seg_batch)  # expect: TML003
        feature_vectors.append(output.cpu())  # expect: TML001
    return torch.cat(feature_vectors, 0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--load_model_path", required=True)
    parser.add_argument("--test_path", required=True)
    parser.add_argument("--prediction_path", required=True)
    parser.add_argument("--pooling", default="first")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--seq_length", type=int, default=128)
    args = parser.parse_args()
    args.tokenizer = str2tokenizer["bert"](args)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = load_model(SentenceEncoder(args), args.load_model_path).to(device)
    src, seg = read_ids(args, args.test_path)
    feats = extract(model, src, seg, args.batch_size, device)
    torch.save(feats, args.prediction_path)
