# Source: https://github.com/TijnBerns/Multitask-Wav2Vec2/blob/0792488a05ae05a11c8a208ea806e6e9ec6c3958/src/models/wav2vec2.py
# Report: one edit from the wav2vec2 speaker-change LightningModule: the per-layer speaker embedding taken in test_step is kept as the GPU slice (the .to("cpu") dropped) in self.embeddings
# Shape: test_step runs under no_grad, so nothing is graph-attached, but every test utterance adds one GPU slice of a hidden state per layer to self.embeddings (a defaultdict(list) on self): device memory grows with the test set
# Expect: TML004 line 60
from collections import defaultdict, deque
from typing import NamedTuple

import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from transformers import Wav2Vec2ForCTC


class EmbeddingSample(NamedTuple):
    key: str
    embedding: torch.Tensor


class SpeakerCTCModule(pl.LightningModule):
    def __init__(self, vocab_size, batch_size=8, lr=5e-5):
        super().__init__()
        self.model = Wav2Vec2ForCTC.from_pretrained("facebook/wav2vec2-base", ctc_loss_reduction="mean")
        self.model.lm_head = torch.nn.Linear(768, vocab_size)
        self.model.freeze_feature_encoder()
        self.batch_size = batch_size
        self.lr = lr
        self.embeddings = defaultdict(list)
        self.embeddings_queue = deque(maxlen=3000)
        self.test_preds = []

    def forward(self, batch, **kwargs):
        return self.model(batch.input_values.to(self.device), labels=batch.labels.to(self.device), **kwargs)

    def training_step(self, batch, batch_idx):
        output = self.forward(batch)
        self.log("train_loss", output.loss, batch_size=self.batch_size)
        return output.loss

    def validation_step(self, batch, batch_idx):
        output = self.forward(batch)
        self.log("val_loss", output.loss, batch_size=self.batch_size)
        return output.loss

    def test_step(self, batch, batch_idx):
        output = self.forward(batch, output_hidden_states=True)
        probs = F.softmax(output.logits, dim=-1)
        hypothesis = batch.decode(torch.argmax(probs, dim=-1))
        for ref, hyp in zip(batch.transcriptions, hypothesis):
            self.test_preds.append({"reference": ref, "hypothesis": hyp})
        self.log("test_loss", output.loss, batch_size=self.batch_size)

        for i in range(len(batch.keys)):
            change_idx = self._speaker_changes(probs[i])
            keys = batch.keys[i].split("-")
            if len(keys) != len(change_idx):
                continue
            for layer, hidden in enumerate(output.hidden_states):
                for j, key in enumerate(keys):
                    embedding = hidden[i][change_idx][j]
                    self.embeddings[layer].append(EmbeddingSample(key, embedding))  # expect: TML004
            self.embeddings_queue.extend(change_idx.tolist())
        return output.loss

    def _speaker_changes(self, probs, change_token=32):
        idx = torch.where(torch.argmax(probs, dim=-1) == change_token)[0]
        scores = probs[:, change_token][idx]
        picked, start = [], 0
        for k in range(len(idx)):
            if k < len(idx) - 1 and idx[k + 1] == idx[k] + 1:
                continue
            best = torch.argmax(scores[start:k + 1]).item()
            picked.append(idx[start:k + 1][best].item())
            start = k + 1
        return torch.tensor(picked)

    def reset_saves(self):
        self.embeddings = defaultdict(list)
        self.test_preds = []

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=self.lr)
