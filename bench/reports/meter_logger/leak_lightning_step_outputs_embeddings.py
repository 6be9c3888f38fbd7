# Source: https://github.com/argilla-io/biome-text/pull/561
# Report: classification heads put the embeddings and mask into the forward output dict; Lightning kept every training_step output for training_epoch_end, so every step's embeddings (and their graph) stayed on the GPU until epoch end
# Shape: head.forward() returns a dict with graph-attached "embeddings"; the LightningModule's training_step returns that dict to a framework that stores all step outputs
# Expect: TML017 line 54
from typing import Any, Dict, List

import pytorch_lightning as pl
import torch
from torch import nn


class TextClassificationHead(nn.Module):
    def __init__(self, vocab_size: int, dim: int, num_labels: int):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.classifier = nn.Linear(dim, num_labels)
        self.loss_fn = nn.CrossEntropyLoss()

    def _make_forward_output(self, logits, label) -> Dict[str, Any]:
        output = {"logits": logits, "probs": torch.softmax(logits, dim=-1)}
        if label is not None:
            output["loss"] = self.loss_fn(logits, label)
        return output

    def forward(self, tokens: torch.Tensor, label: torch.Tensor = None) -> Dict[str, Any]:
        mask = tokens != 0
        embeddings = self.embedder(tokens)
        encoded, _ = self.encoder(embeddings)
        logits = self.classifier(encoded[:, -1])
        output = self._make_forward_output(logits, label)
        # kept for computing attributions later
        output["embeddings"], output["mask"] = embeddings, mask
        return output


class PipelineModel(pl.LightningModule):
    def __init__(self, head: TextClassificationHead, lr: float = 1e-3):
        super().__init__()
        self._head = head
        self.lr = lr

    def forward(self, *args, **kwargs) -> Dict[str, torch.Tensor]:
        return self._head(*args, **kwargs)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {}

    def training_step(self, batch, batch_idx) -> Dict:
        output = self(**batch)
        self.log("training_loss", output["loss"], on_step=True, on_epoch=False)
        for key, val in self.get_metrics().items():
            self.log("training_" + key, val, on_step=True, on_epoch=False)
        return output  # expect: TML017

    def training_epoch_end(self, outputs: List[Any]) -> None:
        for key, val in self.get_metrics(reset=True).items():
            self.log("epoch_training_" + key, val, on_step=False, on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
