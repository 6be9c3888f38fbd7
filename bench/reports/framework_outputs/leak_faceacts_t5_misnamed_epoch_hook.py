# Source: https://github.com/cogstates/2024-lrec-coling-faceacts/blob/120a4c0a2d45abc71e541d566525661d5a136cc4/bin/train.py
# Report: T5 face-act fine-tuner (Lightning 2.x) keeps every training_step loss in self.training_step_outputs; the clearing hook is misspelled `on_training_epoch_end`, which Lightning never calls, and the run is wrapped in @retry(torch.cuda.OutOfMemoryError)
# Shape: training_step -> self._step(batch) returns outputs[0] of the T5 forward (graph-attached) -> appended to a list on self that is never cleared (wrong hook name); validation_step keeps the CUDA scalar losses of the whole val set
# Expect: TML001 line 66; TML004 line 76
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
        self.training_step_outputs.append(loss)  # expect: TML001
        return {"loss": loss}

    def on_training_epoch_end(self):
        avg_train_loss = torch.stack(self.training_step_outputs).mean()
        self.training_step_outputs.clear()
        return {"avg_train_loss": avg_train_loss}

    def validation_step(self, batch, batch_idx):
        loss = self._step(batch)
        self.validation_step_outputs.append(loss)  # expect: TML004
        return {"val_loss": loss}

    def on_validation_epoch_end(self):
        avg_val_loss = torch.stack(self.validation_step_outputs).mean()
        self.log("val_loss", avg_val_loss)
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.model.parameters(), lr=self.hparams.learning_rate)
