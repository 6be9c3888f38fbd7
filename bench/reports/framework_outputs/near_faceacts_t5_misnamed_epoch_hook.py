# Source: https://github.com/cogstates/2024-lrec-coling-faceacts/blob/120a4c0a2d45abc71e541d566525661d5a136cc4/bin/train.py
# Report: fixed variant of the T5 face-act fine-tuner: per-step losses are detached before being kept, the clearing hook has Lightning's real name, validation keeps Python floats
# Shape: training_step appends loss.detach() (no graph) and on_train_epoch_end stacks and clears it; validation_step appends loss.item(); generation runs under a no_grad context manager; the cached helper returns an int
# Expect: near-miss: must be silent
import contextlib
import functools
from typing import Iterator

import lightning.pytorch as pl
import torch
from transformers import T5ForConditionalGeneration, T5Tokenizer


@contextlib.contextmanager
def evaluating(model: torch.nn.Module) -> Iterator[None]:
    with torch.no_grad():
        try:
            yield model.eval()
        finally:
            model.train()


def decode_split(module, loader):
    refs, preds = [], []
    with evaluating(module.model):
        for batch in loader:
            outs = module.model.generate(
                input_ids=batch["source_ids"].to(module.device),
                attention_mask=batch["source_mask"].to(module.device),
                max_length=module.hparams["max_seq_length"],
            )
            refs.extend(module.tokenizer.batch_decode(batch["target_ids"], skip_special_tokens=True))
            preds.extend(module.tokenizer.batch_decode(outs, skip_special_tokens=True))
    return refs, preds


@functools.cache
def longest_prompt(tokenizer_name: str, texts: tuple) -> int:
    tok = T5Tokenizer.from_pretrained(tokenizer_name)
    ids = tok.batch_encode_plus(list(texts), padding="longest", return_tensors="pt")["input_ids"]
    return min(int(ids.size(1)), 256)


class FaceActT5(pl.LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.hparams.update(hparams)
        self.model = T5ForConditionalGeneration.from_pretrained(self.hparams.model_name_or_path)
        self.tokenizer = T5Tokenizer.from_pretrained(self.hparams.model_name_or_path)
        self.training_step_outputs = []
        self.validation_step_outputs = []

    def forward(self, input_ids, attention_mask=None, decoder_attention_mask=None, lm_labels=None):
        return self.model(input_ids, attention_mask=attention_mask,
                          decoder_attention_mask=decoder_attention_mask, labels=lm_labels)

    def _step(self, batch):
        labels = batch["target_ids"]
        labels[labels == self.tokenizer.pad_token_id] = -100
        outputs = self(input_ids=batch["source_ids"], attention_mask=batch["source_mask"],
                       lm_labels=labels, decoder_attention_mask=batch["target_mask"])
        return outputs[0]

    def training_step(self, batch, batch_idx):
        loss = self._step(batch)
        self.training_step_outputs.append(loss.detach())
        return {"loss": loss}

    def on_train_epoch_end(self):
        avg_train_loss = torch.stack(self.training_step_outputs).mean()
        self.log("avg_train_loss", avg_train_loss)
        self.training_step_outputs.clear()

    def validation_step(self, batch, batch_idx):
        loss = self._step(batch)
        self.validation_step_outputs.append(loss.item())
        return {"val_loss": loss}

    def on_validation_epoch_end(self):
        avg_val_loss = sum(self.validation_step_outputs) / max(len(self.validation_step_outputs), 1)
        self.log("val_loss", avg_val_loss)
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.model.parameters(), lr=self.hparams.learning_rate)
