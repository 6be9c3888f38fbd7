# Source: https://github.com/renmada/t5-pegasus-pytorch/issues/59
# Report: T5_copy training (examples/train_t5_copy.py) used 18 GB in training but GPU memory rose quickly during validation until OOM; here predict_batch's `.cpu()` on the generated ids is kept
# Shape: validation_step still appends the generate_ids result to self.val_pred_ids until validation_epoch_end, but moved with .cpu() first, so only host memory grows
# Expect: near-miss: must be silent

import os
import re
import argparse

import numpy as np
import torch
import pytorch_lightning as pl
from transformers import get_linear_schedule_with_warmup

from utils import T5PegasusTokenizer, EncoderDecoderData, compute_rouge, compute_bleu, copy_loss, AdamW
from t5_copy import T5Copy


class TaskLightModel(pl.LightningModule):
    def __init__(self, args, tokenizer):
        super().__init__()
        self.args = args
        self.tokenizer = tokenizer
        self.model = T5Copy.from_pretrained(args.model_path)
        self.val_pred_ids = []
        self.val_labels = []

    def forward(self, **inputs):
        return self.model(**inputs)

    def training_step(self, batch, batch_idx):
        logits = self(**batch).logits
        loss = copy_loss(logits, batch['labels'], batch['decoder_attention_mask'])
        return loss

    def generate_ids(self, batch):
        pred = self.model.generate(eos_token_id=self.tokenizer.sep_token_id,
                                   decoder_start_token_id=self.tokenizer.cls_token_id,
                                   num_beams=self.args.beams,
                                   input_ids=batch['input_ids'],
                                   attention_mask=batch['attention_mask'],
                                   use_cache=True,
                                   max_length=self.args.max_target_length,
                                   src=batch['input_ids'])
        return pred[:, 1:]

    def decode(self, ids):
        texts = self.tokenizer.batch_decode(ids.cpu().numpy(), skip_special_tokens=True)
        return [s.replace(' ', '') for s in texts]

    def validation_step(self, batch, batch_idx):
        if self.current_epoch + 1 < self.args.eval_start:
            return None
        pred_ids = self.generate_ids(batch)
        self.val_pred_ids.append(pred_ids.cpu())
        self.val_labels.extend(self.decode(batch['decoder_input_ids'][:, 1:]))
        return None

    def validation_epoch_end(self, outputs):
        ret = {'rouge-1': 0.0, 'rouge-2': 0.0, 'rouge-l': 0.0, 'bleu': 0.0}
        if self.current_epoch + 1 >= self.args.eval_start:
            preds, labels = [], self.val_labels
            for pred_ids in self.val_pred_ids:
                preds.extend(self.decode(pred_ids))
            if self.args.compute_rouge:
                ret.update(compute_rouge(labels, preds, mode=self.args.rouge_mode))
            if self.args.compute_bleu:
                ret['bleu'] = compute_bleu(labels, preds)
        self.val_pred_ids = []
        self.val_labels = []
        for k, v in ret.items():
            self.log(k, v, prog_bar=True)
        return ret

    def configure_optimizers(self):
        no_decay = 'bias|norm'
        groups = [
            {'params': [p for n, p in self.model.named_parameters() if not re.search(no_decay, n)],
             'weight_decay': self.args.weight_decay},
            {'params': [p for n, p in self.model.named_parameters() if re.search(no_decay, n)],
             'weight_decay': 0.0},
        ]
        optimizer = AdamW(groups, lr=self.args.lr)
        t_total = len(self.train_dataloader()) // self.args.accumulate_grad_batches * self.args.max_epochs
        scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=self.args.warmup_steps,
                                                    num_training_steps=t_total)
        return [optimizer], [{"scheduler": scheduler, "interval": "step"}]
