# Source: https://github.com/torchme/sasrec-bert4rec-recsys23/blob/b255bb428af3b478455caadc8499abb6548dacef/src/training_with_logging_loss_base.py
# Report: SASRec/BERT4Rec with LLM user-profile guidance ("logging loss" baseline run): the guide (profile-reconstruction) loss is computed every batch only to be logged, while the optimizer steps on the recsys loss alone
# Shape: loss_model and loss_guide come back from helper functions; all three running totals (bound per epoch, outside the batch loop) take .item(), so loss_guide's never-backwarded graph dies when the name is rebound next batch
# Expect: near-miss: must be silent
import mlflow
import torch
import torch.nn as nn


def calculate_recsys_loss(target_seq, outputs, criterion):
    return criterion(outputs.view(-1, outputs.size(-1)), target_seq.view(-1))


def calculate_guide_loss(model, user_profile_emb, hidden_for_reconstruction, null_mask, criterion_reconstruct_fn):
    if user_profile_emb is None:
        return torch.zeros((), device=hidden_for_reconstruction.device)
    user_repr = hidden_for_reconstruction.mean(dim=1)
    projected = model.profile_projection(user_repr)
    keep = null_mask == 0
    return criterion_reconstruct_fn(projected[keep], user_profile_emb[keep])


def train_model(model, train_loader, valid_loader, evaluate_model, profile_embeddings, null_profile_mask,
                epochs, lr, device, eval_every=1):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss(ignore_index=0)
    reconstruct_fn = nn.MSELoss()

    for epoch in range(1, epochs + 1):
        model.train()
        total_loss = 0
        total_guide_loss = 0
        total_recsys_loss = 0

        for input_seq, target_seq, user_ids in train_loader:
            input_seq, target_seq, user_ids = input_seq.to(device), target_seq.to(device), user_ids.to(device)
            profile_emb = profile_embeddings[user_ids]
            null_mask = null_profile_mask[user_ids].flatten()

            outputs, hidden_for_reconstruction = model(input_seq)
            loss_model = calculate_recsys_loss(target_seq, outputs, criterion)
            loss_guide = calculate_guide_loss(model, profile_emb, hidden_for_reconstruction, null_mask, reconstruct_fn)
            loss = loss_model

            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
            optimizer.step()

            total_loss += loss.item()
            total_recsys_loss += loss_model.item()
            total_guide_loss += loss_guide.item()

        n = len(train_loader)
        avg_loss, avg_recsys, avg_guide = total_loss / n, total_recsys_loss / n, total_guide_loss / n
        print(f"epoch {epoch} | total {avg_loss:.4f} | recsys {avg_recsys:.4f} | guide {avg_guide:.4f}")
        mlflow.log_metric("train_loss", avg_loss, step=epoch)
        mlflow.log_metric("train_recsys_loss", avg_recsys, step=epoch)
        mlflow.log_metric("train_guide_loss", avg_guide, step=epoch)

        if epoch % eval_every == 0:
            for name, value in evaluate_model(model, valid_loader, device, mode="validation").items():
                mlflow.log_metric(f"val_{name.replace('@', '_')}", value, step=epoch)
    return model
