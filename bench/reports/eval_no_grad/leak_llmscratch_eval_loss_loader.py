# Source: https://github.com/rasbt/LLMs-from-scratch/blob/29e36846f4888b26b2999e11b58bbfe8123fc562/ch05/01_main-chapter-code/gpt_train.py
# Report: GPT pretraining loop from the book; the repository's evaluate_model wraps the loss estimate in torch.no_grad() and calc_loss_loader sums loss.item(); this variant drops the no_grad and sums the loss tensor
# Shape: with grad enabled each calc_loss_batch loss carries its whole forward graph (logits over the vocabulary); total_loss += loss chains eval_iter of them, the returned tensor is appended to train_losses/val_losses at every evaluation, so every evaluation's activations stay alive until training ends
# Expect: TML001 lines 35, 63, 64
import torch
import torch.nn as nn


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["ctx_len"], cfg["emb_dim"])
        layer = nn.TransformerEncoderLayer(cfg["emb_dim"], cfg["n_heads"], batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, cfg["n_layers"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        return self.out_head(self.blocks(self.tok_emb(idx) + self.pos_emb(pos)))


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


def calc_loss_loader(data_loader, model, device, num_batches=None):
    total_loss = 0.
    num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            total_loss += loss  # expect: TML001
        else:
            break
    return total_loss / num_batches


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
    val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
    model.train()
    return train_loss, val_loss


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs, eval_freq, eval_iter):
    train_losses, val_losses, track_tokens_seen = [], [], []
    tokens_seen, global_step = 0, -1
    for epoch in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()
            optimizer.step()
            tokens_seen += input_batch.numel()
            global_step += 1
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)  # expect: TML001
                val_losses.append(val_loss)  # expect: TML001
                track_tokens_seen.append(tokens_seen)
                print(f"Ep {epoch+1} (Step {global_step:06d}): "
                      f"Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")
    return train_losses, val_losses, track_tokens_seen
