# Source: https://github.com/andreeaiana/newsreclib/blob/1ac532e99ca0ba316fa8d6b5f2feb68a719df491/newsreclib/models/abstract_recommender.py
# Report: news-recommendation LightningModules (PPRec, NRMS, ...) collect each step's locals() named in `outputs` into self.training_step_outputs for epoch-end ranking metrics; in training_step `preds` still carries the graph
# Shape: training_step -> _collect_step_outputs(local_vars=locals()) appends the graph-attached preds (torch.cat of masked click scores) to a list on self that is cleared only in on_train_epoch_end: one epoch of score tensors and their grad_fn chains stay alive
# Expect: TML001 line 70
from typing import Dict, List

import torch
from lightning import LightningModule
from torch.nn import CrossEntropyLoss
from torch_geometric.utils import to_dense_batch
from torchmetrics import MeanMetric, MetricCollection
from torchmetrics.retrieval import RetrievalMRR, RetrievalNormalizedDCG


class AbstractRecommender(LightningModule):
    def __init__(self, outputs: Dict[str, List[str]]):
        super().__init__()
        self.train_loss = MeanMetric()
        self.step_outputs = {stage: {key: [] for key in keys} for stage, keys in outputs.items()}

    def _collect_model_outputs(self, vector, mask):
        return torch.cat([vector[n][mask[n]] for n in range(mask.shape[0])], dim=0)

    def _collect_step_outputs(self, outputs_dict, local_vars):
        for key in outputs_dict.keys():
            val = local_vars.get(key, [])
            outputs_dict[key].append(val)
        return outputs_dict

    def _gather_step_outputs(self, outputs_dict, key):
        return torch.cat([output for output in outputs_dict[key]])

    def _clear_epoch_outputs(self, outputs_dict):
        for key in outputs_dict.keys():
            outputs_dict[key].clear()
        return outputs_dict


class PPRecModule(AbstractRecommender):
    def __init__(self, news_encoder, user_encoder, popularity_encoder, outputs, optimizer):
        super().__init__(outputs)
        self.news_encoder = news_encoder
        self.user_encoder = user_encoder
        self.popularity_encoder = popularity_encoder
        self.optimizer_factory = optimizer
        self.criterion = CrossEntropyLoss()
        metrics = MetricCollection({"ndcg@10": RetrievalNormalizedDCG(top_k=10), "mrr": RetrievalMRR()})
        self.train_rec_metrics = metrics.clone(prefix="train/")
        self.training_step_outputs = self.step_outputs["train"]

    def forward(self, batch):
        hist, mask_hist = to_dense_batch(self.news_encoder(batch["x_hist"]), batch["batch_hist"])
        cand, mask_cand = to_dense_batch(self.news_encoder(batch["x_cand"]), batch["batch_cand"])
        user_vector = self.user_encoder(hist, mask_hist)
        return torch.bmm(cand, user_vector.unsqueeze(-1)).squeeze(-1) + self.popularity_encoder(cand)

    def model_step(self, batch):
        scores = self.forward(batch)
        y_true, mask_cand = to_dense_batch(batch["labels"], batch["batch_cand"])
        loss = self.criterion(scores, y_true)
        preds = self._collect_model_outputs(scores, mask_cand)
        targets = self._collect_model_outputs(y_true, mask_cand)
        cand_news_size = torch.tensor([int(mask_cand[n].sum()) for n in range(mask_cand.shape[0])])
        return loss, preds, targets, cand_news_size

    def training_step(self, batch, batch_idx: int):
        loss, preds, targets, cand_news_size = self.model_step(batch)
        self.train_loss(loss)
        self.log("train/loss", self.train_loss, on_step=False, on_epoch=True, prog_bar=True)
        self.training_step_outputs = self._collect_step_outputs(outputs_dict=self.training_step_outputs, local_vars=locals())  # expect: TML001
        return loss

    def on_train_epoch_end(self) -> None:
        preds = self._gather_step_outputs(self.training_step_outputs, "preds")
        targets = self._gather_step_outputs(self.training_step_outputs, "targets")
        cand_news_size = self._gather_step_outputs(self.training_step_outputs, "cand_news_size")
        indexes = torch.arange(cand_news_size.shape[0]).repeat_interleave(cand_news_size)
        self.train_rec_metrics(preds, targets, indexes=indexes)
        self.log_dict(self.train_rec_metrics, on_step=False, on_epoch=True)
        self.training_step_outputs = self._clear_epoch_outputs(self.training_step_outputs)

    def configure_optimizers(self):
        return {"optimizer": self.optimizer_factory(params=self.parameters())}
