# Source: https://github.com/monologg/JointBERT/blob/master/trainer.py
# Report: repository is correct: the joint intent/slot trainer divides the loss for gradient accumulation, calls backward, then adds loss.item() to tr_loss, which train() returns as tr_loss / global_step
# Shape: model outputs tuple (loss, (intent_logits, slot_logits)); tr_loss is a float bound before both loops; zero_grad/step only every gradient_accumulation_steps
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler


class Trainer(object):
    def __init__(self, args, model, train_dataset=None, dev_dataset=None):
        self.args = args
        self.model = model
        self.train_dataset = train_dataset
        self.dev_dataset = dev_dataset
        self.device = "cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu"
        self.model.to(self.device)

    def _inputs(self, batch):
        inputs = {"input_ids": batch[0], "attention_mask": batch[1],
                  "intent_label_ids": batch[3], "slot_labels_ids": batch[4]}
        if self.args.model_type != "distilbert":
            inputs["token_type_ids"] = batch[2]
        return inputs

    def train(self):
        train_dataloader = DataLoader(self.train_dataset, sampler=RandomSampler(self.train_dataset),
                                      batch_size=self.args.batch_size)
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.args.learning_rate)
        global_step = 0
        tr_loss = 0.0
        self.model.zero_grad()

        for _ in range(int(self.args.num_train_epochs)):
            for step, batch in enumerate(train_dataloader):
                self.model.train()
                batch = tuple(t.to(self.device) for t in batch)
                outputs = self.model(**self._inputs(batch))
                loss = outputs[0]

                if self.args.gradient_accumulation_steps > 1:
                    loss = loss / self.args.gradient_accumulation_steps

                loss.backward()

                tr_loss += loss.item()
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
                    optimizer.step()
                    self.model.zero_grad()
                    global_step += 1

                    if self.args.logging_steps > 0 and global_step % self.args.logging_steps == 0:
                        self.evaluate()

        return global_step, tr_loss / global_step

    def evaluate(self):
        eval_dataloader = DataLoader(self.dev_dataset, sampler=SequentialSampler(self.dev_dataset),
                                     batch_size=self.args.batch_size)
        eval_loss, nb_eval_steps = 0.0, 0
        intent_preds = None
        self.model.eval()
        for batch in eval_dataloader:
            batch = tuple(t.to(self.device) for t in batch)
            with torch.no_grad():
                outputs = self.model(**self._inputs(batch))
                tmp_eval_loss, (intent_logits, slot_logits) = outputs[:2]
                eval_loss += tmp_eval_loss.mean().item()
            nb_eval_steps += 1
            if intent_preds is None:
                intent_preds = intent_logits.detach().cpu().numpy()
            else:
                intent_preds = np.append(intent_preds, intent_logits.detach().cpu().numpy(), axis=0)
        return {"loss": eval_loss / nb_eval_steps, "intent_preds": np.argmax(intent_preds, axis=1)}
