# Source: https://github.com/OpenLMLab/LOMO/blob/6b89c4211b72a2ac67c9ba1166d69356230a3b7d/src/mytrainer.py
# Report: audit of the LOMO fine-tuning trainer: eval_step runs the causal LM and scores each multiple-choice option by its token loss with no grad context of its own; the repo's caller wraps it in torch.no_grad() and gets preds.tolist(), this is the variant it avoided, with no no_grad in the loop and the attached option scores returned and kept
# Shape: eval_step returns the graph-attached per-option scores (built from outs.logits); evaluate() keeps every batch's scores in a list until the end of the eval set, with grad enabled throughout
# Expect: TML001 line 52; TML003 line 35
import torch
import torch.nn as nn


class ChoiceEvalTrainer:
    """Fine-tunes a causal LM and evaluates it on multiple-choice questions."""

    def __init__(self, model, tokenizer, train_loader, eval_loader, lr=1e-5, device="cuda"):
        self.model = model.to(device)
        self.tokenizer = tokenizer
        self.train_loader = train_loader
        self.eval_loader = eval_loader
        self.device = device
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.history = []

    def train_epoch(self):
        self.model.train()
        for batch in self.train_loader:
            out = self.model(
                input_ids=batch["input_ids"].to(self.device),
                attention_mask=batch["attention_mask"].to(self.device),
                labels=batch["labels"].to(self.device),
            )
            self.optimizer.zero_grad()
            out.loss.backward()
            self.optimizer.step()
            self.history.append(out.loss.item())

    def eval_step(self, batch):
        outs = self.model(  # expect: TML003
            input_ids=batch["input_ids"].to(self.device),
            attention_mask=batch["attention_mask"].to(self.device),
        )
        shift_logits = outs.logits[..., :-1, :].contiguous()
        shift_labels = batch["labels"][..., 1:].to(self.device).contiguous()
        loss_fct = nn.CrossEntropyLoss(reduction="none", ignore_index=-100)
        token_loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        choice_loss = token_loss.view_as(shift_labels).mean(dim=1)
        groups = choice_loss.split(batch["split_size"])
        return [-g for g in groups]

    def evaluate(self, dataset_answers):
        self.model.eval()
        all_scores = []
        for batch in self.eval_loader:
            scores = self.eval_step(batch)
            all_scores.extend(scores)  # expect: TML001
        all_preds = [int(s.argmax()) for s in all_scores]
        acc = sum(int(p == a) for p, a in zip(all_preds, dataset_answers)) / len(dataset_answers)
        return {"eval/acc": acc}

    def fit(self, epochs, dataset_answers):
        for epoch in range(epochs):
            self.train_epoch()
            metrics = self.evaluate(dataset_answers)
            print(f"epoch {epoch}: {metrics} last loss {self.history[-1]:.4f}")
