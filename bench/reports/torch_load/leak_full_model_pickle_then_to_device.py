# Source: https://akhiltvsn.medium.com/making-sense-of-pytorchs-to-device-and-map-location-b1631f381b8a
# Report: an inference script did torch.load(model_path).to(device); the GPU-trained checkpoint is first restored onto the device it was saved from, which fails on a CPU-only box and costs an extra copy elsewhere; map_location fixes it
# Shape: a small predictor class unpickles the whole trained model and only afterwards moves it with .to(device)
# Expect: TML011 line 24
import argparse

import torch
import torch.nn.functional as F


class SentimentPredictor:
    LABELS = ("negative", "neutral", "positive")

    def __init__(self, model_path, vocab_path, device=None):
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.vocab = {}
        with open(vocab_path) as f:
            for i, tok in enumerate(f):
                self.vocab[tok.strip()] = i
        # the pickled nn.Module comes back on the GPU it was trained on,
        # and only then gets moved to self.device
        self.model = torch.load(model_path, weights_only=False).to(self.device)  # expect: TML011
        self.model.eval()

    def encode(self, text, max_len=64):
        ids = [self.vocab.get(t, 1) for t in text.lower().split()][:max_len]
        ids += [0] * (max_len - len(ids))
        return torch.tensor(ids, dtype=torch.long).unsqueeze(0)

    @torch.inference_mode()
    def predict(self, text):
        logits = self.model(self.encode(text).to(self.device))
        probs = F.softmax(logits, dim=-1)[0]
        best = int(probs.argmax())
        return self.LABELS[best], float(probs[best])


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="sentiment_lstm.pt")
    p.add_argument("--vocab", default="vocab.txt")
    p.add_argument("text")
    args = p.parse_args()
    predictor = SentimentPredictor(args.model, args.vocab)
    print(predictor.predict(args.text))
