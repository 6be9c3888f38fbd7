# Source: https://github.com/jadore801120/attention-is-all-you-need-pytorch/blob/20f355eb655bad40195ae302b9d8036716be9a23/transformer/Translator.py
# Report: issue #95 of the repo: Translator loads the trained checkpoint with torch.load(opt.model) and no map_location, so a checkpoint saved from a busy GPU fails with CUDA OOM even when translating on CPU; the author added map_location=self.device.
# Shape: the checkpoint dict (weights + settings) comes back on the GPU it was saved from before model.load_state_dict / .to(self.device) run.
# Expect: TML011 line 32
import torch
import torch.nn as nn
import torch.nn.functional as F


class Transformer(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, d_model=512, n_layers=6, n_head=8):
        super().__init__()
        self.src_emb = nn.Embedding(src_vocab, d_model)
        self.tgt_emb = nn.Embedding(tgt_vocab, d_model)
        self.core = nn.Transformer(d_model, n_head, n_layers, n_layers, batch_first=True)
        self.tgt_word_prj = nn.Linear(d_model, tgt_vocab, bias=False)

    def encode(self, src_seq):
        return self.core.encoder(self.src_emb(src_seq))

    def decode(self, dec_seq, enc_output):
        return self.core.decoder(self.tgt_emb(dec_seq), enc_output)


class Translator(object):
    """Load with trained model and handle decoding."""

    def __init__(self, opt):
        self.opt = opt
        self.device = torch.device("cuda" if opt.cuda else "cpu")

        checkpoint = torch.load(opt.model)  # expect: TML011
        model_opt = checkpoint["settings"]
        self.model_opt = model_opt

        model = Transformer(model_opt.src_vocab_size, model_opt.tgt_vocab_size,
                            d_model=model_opt.d_model, n_layers=model_opt.n_layers,
                            n_head=model_opt.n_head)
        model.load_state_dict(checkpoint["model"])
        print("[Info] Trained model state loaded.")

        self.model = model.to(self.device)
        self.model.eval()

    def translate_batch(self, src_seq, bos_idx, eos_idx):
        def predict_word(dec_seq, enc_output):
            dec_output = self.model.decode(dec_seq, enc_output)[:, -1, :]
            return F.log_softmax(self.model.tgt_word_prj(dec_output), dim=1)

        with torch.no_grad():
            src_seq = src_seq.to(self.device)
            enc_output = self.model.encode(src_seq)
            hyps = [[bos_idx] for _ in range(src_seq.size(0))]
            for _ in range(self.model_opt.max_token_seq_len):
                dec_seq = torch.tensor(hyps, dtype=torch.long, device=self.device)
                word_prob = predict_word(dec_seq, enc_output)
                next_words = word_prob.argmax(dim=1).tolist()
                for hyp, w in zip(hyps, next_words):
                    hyp.append(w)
                if all(w == eos_idx for w in next_words):
                    break
        return hyps


def main(opt, test_loader, idx2word):
    translator = Translator(opt)
    with open(opt.output, "w") as f:
        for src_seq in test_loader:
            for hyp in translator.translate_batch(src_seq, opt.bos_idx, opt.eos_idx):
                f.write(" ".join(idx2word[i] for i in hyp[1:]) + "\n")
    print("[Info] Finished.")
