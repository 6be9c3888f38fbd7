# Source: https://github.com/zmh908264302/souhu_text_match_2021/blob/4ff665d486b3091168f7f81c6377996ba17ea99d/roformer_match.py
# Report: audit of a text-matching fine-tuning script: every training step appends outputs.logits (still attached to the step's graph) and the GPU label tensor to per-epoch lists used for train F1 at eval time; do_eval likewise keeps every batch's logits and labels on the GPU
# Shape: the HF-style output object travels as outputs.logits into a list that lives for the whole epoch; eval appends device logits/labels and concatenates them only at the end
# Expect: TML001 line 51; TML004 line 31; TML004 line 32; TML004 line 52
import torch
from sklearn.metrics import accuracy_score, f1_score
from torch.utils.data import DataLoader


def encode(tokenizer, batch, max_len, device):
    sources, targets, labels = batch
    enc = tokenizer(list(zip(sources, targets)), padding=True, truncation="longest_first",
                    max_length=max_len, return_tensors="pt").to(device)
    labels = torch.tensor([int(x) for x in labels], dtype=torch.long).to(device)
    return enc, labels


def score(logits, labels):
    preds = logits.argmax(dim=-1).numpy()
    return accuracy_score(labels.numpy(), preds), f1_score(labels.numpy(), preds, average="macro")


def do_eval(model, tokenizer, loader, max_len, device):
    model.eval()
    eval_preds, eval_labels, total = [], [], 0.0
    with torch.no_grad():
        for batch in loader:
            enc, labels = encode(tokenizer, batch, max_len, device)
            outputs = model(**enc, labels=labels, return_dict=True)
            total += outputs.loss.item()
            eval_preds.append(outputs.logits)  # expect: TML004
            eval_labels.append(labels)  # expect: TML004
    logits = torch.cat(eval_preds).cpu()
    labels = torch.cat(eval_labels).cpu()
    acc, f1 = score(logits, labels)
    return {"eval_loss": total / len(loader), "eval_acc": acc, "eval_f1": f1}


def train(model, tokenizer, train_pairs, valid_pairs, args, device="cuda"):
    train_loader = DataLoader(train_pairs, batch_size=args.train_batch_size, shuffle=True)
    valid_loader = DataLoader(valid_pairs, batch_size=args.eval_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    history, global_step, best_f1 = [], 0, float("-inf")
    for epoch in range(args.num_train_epochs):
        model.train()
        tr_loss, train_logits, train_labels = 0.0, [], []
        for step, batch in enumerate(train_loader):
            enc, labels = encode(tokenizer, batch, args.max_seq_length, device)
            outputs = model(**enc, labels=labels, return_dict=True)
            logits, loss = outputs.logits, outputs.loss
            train_logits.append(logits)  # expect: TML001
            train_labels.append(labels)  # expect: TML004
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            tr_loss += loss.item()
            global_step += 1
            if global_step % args.eval_step == 0:
                train_acc, train_f1 = score(torch.cat(train_logits).detach().cpu(),
                                            torch.cat(train_labels).cpu())
                result = do_eval(model, tokenizer, valid_loader, args.max_seq_length, device)
                result.update(step=global_step, train_loss=tr_loss / (step + 1), train_f1=train_f1)
                history.append(result)
                if result["eval_f1"] > best_f1:
                    best_f1 = result["eval_f1"]
                    torch.save(model.state_dict(), f"{args.output_dir}/pytorch_model.bin")
                model.train()
    return history, best_f1
