# Source: https://github.com/thinkingmanyangyang/multi-classification/blob/eea599a818106d2c2c1317da02eb71fd9c7a3a1c/train_and_eval.py
# Report: BERT multi-label classifier trained with FGM and gradient accumulation; the repository's evaluate() wraps the batch in torch.no_grad(), this variant lost that context
# Shape: evaluate() (called every 30 steps) runs BERT forwards with grad on and no backward; total_loss += loss * n chains every eval batch's graph, so all activations of the dev set stay alive until evaluate returns
# Expect: TML003 line 41; TML001 line 44
import numpy as np
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler


class FGM:
    def __init__(self, model, epsilon=1.0, emb_name="word_embeddings"):
        self.model = model
        self.epsilon = epsilon
        self.emb_name = emb_name
        self.backup = {}

    def attack(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad and self.emb_name in name:
                self.backup[name] = param.data.clone()
                norm = torch.norm(param.grad)
                if norm != 0 and not torch.isnan(norm):
                    param.data.add_(self.epsilon * param.grad / norm)

    def restore(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad and self.emb_name in name:
                param.data = self.backup[name]
        self.backup = {}


def evaluate(args, model, eval_dataset, collate_fn):
    loader = DataLoader(eval_dataset, sampler=SequentialSampler(eval_dataset),
                        batch_size=args.eval_batch_size, collate_fn=collate_fn)
    total_loss = 0.
    total_sample_num = 0
    preds, out_label_ids = None, None
    for batch in loader:
        model.eval()
        inputs = {k: v.to(args.device) for k, v in batch.items()}
        outputs = model(**inputs)  # expect: TML003
        loss, logits = outputs[0], outputs[1]
        n = inputs["labels"].shape[0]
        total_loss += loss * n  # expect: TML001
        total_sample_num += n
        if preds is None:
            preds = logits.detach().cpu().numpy()
            out_label_ids = inputs["labels"].detach().cpu().numpy()
        else:
            preds = np.append(preds, logits.detach().cpu().numpy(), axis=0)
            out_label_ids = np.append(out_label_ids, inputs["labels"].detach().cpu().numpy(), axis=0)
    model.train()
    preds = (preds >= 0.5).astype(int)
    acc = float((preds == out_label_ids).all(axis=1).mean())
    return total_loss / total_sample_num, acc


def trains(args, train_dataset, eval_dataset, model, optimizer, scheduler, collate_fn):
    loader = DataLoader(train_dataset, sampler=RandomSampler(train_dataset),
                        batch_size=args.train_batch_size, collate_fn=collate_fn)
    fgm = FGM(model) if args.attack == "fgm" else None
    global_step, tr_loss, logging_loss = 0, 0.0, 0.0
    best_acc, best_epoch = 0.0, 0
    model.zero_grad()
    for epoch in range(args.num_train_epochs):
        for step, batch in enumerate(loader):
            model.train()
            inputs = {k: v.to(args.device) for k, v in batch.items()}
            outputs = model(**inputs)
            loss = outputs[0]
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            logging_loss += loss.item()
            tr_loss += loss.item()

            if fgm is not None:
                fgm.attack()
                loss_adv = model(**inputs)[0]
                loss_adv.backward()
                fgm.restore()

            if (step + 1) % args.gradient_accumulation_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                scheduler.step()
                model.zero_grad()
                global_step += 1
                if global_step % 30 == 0:
                    print(f"epoch {epoch + 1} step {global_step} loss {logging_loss / 30:.4f}")
                    logging_loss = 0.0
                    eval_loss, acc = evaluate(args, model, eval_dataset, collate_fn)
                    if acc > best_acc:
                        best_acc, best_epoch = acc, epoch
                        model.save_pretrained(args.output_dir)
        if epoch - best_epoch >= 3:
            break
    return tr_loss / max(global_step, 1)
