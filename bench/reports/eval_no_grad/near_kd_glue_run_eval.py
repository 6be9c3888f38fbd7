# Source: https://github.com/Istlemin/knowledge-distillation-transformers/blob/45926d76baf20d95c0f8f8deb9d2d64b17738a90/finetune.py
# Report: fix for the TinyBERT-style GLUE distillation evaluator: run_eval (called every eval_steps from inside run_epoch and after each epoch) is decorated with @torch.no_grad()
# Shape: same KD wrapper returning (loss, predictions); the decorated run_eval records no graph, keeps only .item()/.tolist() values, and the caller switches back with model.train()
# Expect: near-miss: must be silent
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def soft_cross_entropy(student_logits, teacher_logits):
    return (-F.softmax(teacher_logits, dim=-1) * F.log_softmax(student_logits, dim=-1)).mean()


class KDSequenceClassification(nn.Module):
    def __init__(self, teacher, student, layer_map):
        super().__init__()
        self.teacher = teacher
        self.teacher.requires_grad_(False)
        self.student = student
        self.layer_map = layer_map

    def forward(self, input_ids, token_type_ids, attention_mask, labels=None):
        self.teacher.eval()
        kwargs = dict(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                      output_hidden_states=True, output_attentions=True, return_dict=True)
        s_out = self.student(**kwargs)
        t_out = self.teacher(**kwargs)
        loss = soft_cross_entropy(s_out.logits, t_out.logits)
        for i, s_hidden in enumerate(s_out.hidden_states):
            loss = loss + F.mse_loss(s_hidden, t_out.hidden_states[self.layer_map[i]])
        return loss, torch.argmax(s_out.logits, dim=1)


def run_epoch(model, dataloader, device, optimizer, scheduler, eval_steps=None, dev_dataloader=None):
    model.train()
    losses, correct, total = [], 0, 0
    for step, batch in enumerate(dataloader):
        labels = batch.labels.to(device)
        optimizer.zero_grad()
        loss, predictions = model(input_ids=batch.input_ids.to(device),
                                  token_type_ids=batch.token_type_ids.to(device),
                                  attention_mask=batch.attention_mask.to(device),
                                  labels=labels)
        correct += torch.sum(predictions == labels).item()
        total += len(batch.input_ids)
        loss = torch.mean(loss)
        loss.backward()
        losses.append(loss.detach().item())
        optimizer.step()
        scheduler.step()
        if eval_steps is not None and (step + 1) % eval_steps == 0:
            run_eval(model, dev_dataloader, device)
            model.train()
    return float(np.mean(losses)), correct / total


@torch.no_grad()
def run_eval(model, dataloader, device):
    model.eval()
    losses, all_predictions, all_labels = [], [], []
    for batch in dataloader:
        labels = batch.labels.to(device)
        loss, predictions = model(input_ids=batch.input_ids.to(device),
                                  token_type_ids=batch.token_type_ids.to(device),
                                  attention_mask=batch.attention_mask.to(device),
                                  labels=labels)
        all_predictions += predictions.tolist()
        all_labels += labels.tolist()
        losses.append(torch.mean(loss).detach().item())

    preds = torch.tensor(all_predictions)
    gold = torch.tensor(all_labels)
    metrics = {"loss": float(np.mean(losses)), "accuracy": (preds == gold).sum().item() / len(gold)}
    logging.info("Eval results: %s", metrics)
    return metrics
