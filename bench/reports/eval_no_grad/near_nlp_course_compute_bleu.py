# Source: https://github.com/yandexdataschool/nlp_course/pull/66
# Report: seq2seq homework (week04): the provided compute_bleu translated the whole dev set with gradients enabled, so greedy decoding kept every step's autograd graph; huge memory use / OOM, fixed by wrapping it in torch.no_grad()
# Shape: the merged fix: the same eval-mode encode + greedy decode, but inside `with torch.no_grad():` so no step keeps a graph
# Expect: near-miss: must be silent
import numpy as np
import torch
from nltk.translate.bleu_score import corpus_bleu

from seq2seq_model import BasicModel, compute_loss
from vocab import Vocab

device = "cuda" if torch.cuda.is_available() else "cpu"


def compute_bleu(model, inp_lines, out_lines, bpe_sep="@@ ", chunk=500, max_len=100):
    model.eval()
    translations = []
    with torch.no_grad():
        for start in range(0, len(inp_lines), chunk):
            inp = model.inp_voc.to_matrix(inp_lines[start:start + chunk]).to(device)
            out_ids, _ = model.decode_inference(model.encode(inp), max_len=max_len)
            translations.extend(model.out_voc.to_lines(out_ids.cpu().numpy()))
    translations = [line.replace(bpe_sep, "") for line in translations]
    actual = [line.replace(bpe_sep, "") for line in out_lines]
    return corpus_bleu(
        [[ref.split()] for ref in actual],
        [trans.split() for trans in translations],
        smoothing_function=lambda precisions, **kw: [p + 1.0 / p.denominator for p in precisions],
    ) * 100


def train(train_inp, train_out, dev_inp, dev_out, steps=25000, batch_size=32):
    inp_voc = Vocab.from_lines(train_inp)
    out_voc = Vocab.from_lines(train_out)
    model = BasicModel(inp_voc, out_voc).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    metrics = {"train_loss": [], "dev_bleu": []}
    for step in range(1, steps + 1):
        model.train()
        batch_ix = np.random.randint(len(train_inp), size=batch_size)
        batch_inp = inp_voc.to_matrix(train_inp[batch_ix]).to(device)
        batch_out = out_voc.to_matrix(train_out[batch_ix]).to(device)
        loss_t = compute_loss(model, batch_inp, batch_out)
        opt.zero_grad()
        loss_t.backward()
        opt.step()
        metrics["train_loss"].append((step, loss_t.item()))
        if step % 100 == 0:
            metrics["dev_bleu"].append((step, compute_bleu(model, dev_inp, dev_out)))
            print("Mean loss=%.3f" % np.mean(metrics["train_loss"][-10:], axis=0)[1], flush=True)
    return model, metrics
