# Source: https://github.com/microsoft/hi-ml/pull/293
# Report: DeepMILModule._shared_step put the input tile images (and other GPU tensors) in its results dict; Lightning kept every validation/test step's returned dict for *_epoch_end, so a whole epoch of images stayed in GPU memory (CUDA OOM)
# Shape: shared step builds a results dict that holds batch["image"]; validation_step/test_step return it and *_epoch_end is overridden, so the framework keeps every step's dict
# Expect: TML017 line 54; TML017 line 58
from typing import Dict, List

import torch
from pytorch_lightning import LightningModule
from torch import Tensor, nn, optim


class DeepMILModule(LightningModule):
    def __init__(self, encoder: nn.Module, pooling: nn.Module, classifier: nn.Module, lr: float = 3e-4):
        super().__init__()
        self.encoder = encoder
        self.aggregation_fn = pooling
        self.classifier_fn = classifier
        self.loss_fn = nn.BCEWithLogitsLoss()
        self.lr = lr

    def forward(self, images: Tensor):
        features = self.encoder(images)
        attentions, bag_features = self.aggregation_fn(features)
        return self.classifier_fn(bag_features), attentions

    def _shared_step(self, batch: Dict, batch_idx: int, stage: str) -> Dict:
        bag_logits, bag_labels, bag_attn_list = [], [], []
        for bag_idx in range(len(batch["image"])):
            images = batch["image"][bag_idx].float()
            logits, attn = self(images)
            bag_logits.append(logits.view(-1))
            bag_attn_list.append(attn)
            bag_labels.append(batch["label"][bag_idx].view(-1)[0])
        bag_logits = torch.stack(bag_logits)
        bag_labels = torch.stack(bag_labels).view(-1, 1)
        loss = self.loss_fn(bag_logits, bag_labels.float())
        predicted_probs = torch.sigmoid(bag_logits)
        results = {
            "loss": loss,
            "prob": predicted_probs,
            "pred_label": torch.round(predicted_probs),
            "true_label": bag_labels,
            "bag_attn": bag_attn_list,
            "slide_id": batch["slide_id"],
            "image": batch["image"],
        }
        self.log(f"{stage}/loss", loss, on_epoch=True, on_step=False)
        return results

    def training_step(self, batch, batch_idx):
        return self._shared_step(batch, batch_idx, "train")["loss"]

    def validation_step(self, batch, batch_idx):
        return self._shared_step(batch, batch_idx, "val")  # expect: TML017

    def test_step(self, batch, batch_idx):
        test_result = self._shared_step(batch, batch_idx, "test")
        return test_result  # expect: TML017

    def validation_epoch_end(self, outputs: List[Dict]) -> None:
        probs = torch.cat([o["prob"] for o in outputs])
        self.log("val/mean_prob", probs.mean())

    def test_epoch_end(self, outputs: List[Dict]) -> None:
        slide_ids = [sid for o in outputs for sid in o["slide_id"]]
        probs = torch.cat([o["prob"] for o in outputs]).cpu().tolist()
        torch.save({"slide_id": slide_ids, "prob": probs}, "test_output.pt")

    def configure_optimizers(self):
        return optim.Adam(self.parameters(), lr=self.lr)
