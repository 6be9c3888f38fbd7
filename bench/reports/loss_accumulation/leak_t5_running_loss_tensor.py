# Source: https://github.com/quocnguyenx43/training-model/blob/6f20138fe91defc23f0f9bf6b1f9d5e429400762/functions_train_task_3.py
# Report: the seq2seq (ViT5/T5) training loop adds the graph-attached loss (outputs[0]) to running_loss with no .item()/.detach(), and running_loss lives for the whole epoch until it is printed
# Shape: train() keeps running_loss per epoch, adds outputs[0] of the HF seq2seq model every batch, then prints it with an f-string at epoch end; the decoder shift lives in a helper
# Expect: TML001 line 31
import torch
from torch.optim import AdamW
from tqdm import tqdm
from transformers import AutoTokenizer, T5ForConditionalGeneration


def shift_targets(target_ids, pad_token_id):
    decoder_input_ids = target_ids[:, :-1].contiguous()
    lm_labels = target_ids[:, 1:].clone().detach()
    lm_labels[target_ids[:, 1:] == pad_token_id] = -100
    return decoder_input_ids, lm_labels


def train(model, optimizer, tokenizer, epochs, train_dataloader, saving_path=None, device="cpu"):
    for epoch in range(epochs):
        model.train()
        running_loss = 0.0
        with tqdm(train_dataloader, desc=f"Epoch {epoch + 1}/{epochs}") as bar:
            for batch_idx, batch in enumerate(bar):
                ids = batch["input"]["input_ids"].to(device, dtype=torch.long)
                mask = batch["input"]["attention_mask"].to(device, dtype=torch.long)
                targets = batch["label"]["input_ids"].to(device, dtype=torch.long)
                dec_ids, lm_labels = shift_targets(targets, tokenizer.pad_token_id)

                outputs = model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_ids, labels=lm_labels)
                loss = outputs[0]
                running_loss += loss  # expect: TML001

                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                bar.set_postfix(batch=f"{batch_idx + 1}/{len(train_dataloader)}")

        print(f"Epoch {epoch + 1}/{epochs}, Loss: {running_loss:.4f}")
        if saving_path:
            path = f"{saving_path}_{epoch}.pth"
            torch.save(model.state_dict(), path)
            print("Saved model in " + path)


def main(train_dataloader, epochs=5, device="cuda"):
    tokenizer = AutoTokenizer.from_pretrained("VietAI/vit5-base")
    model = T5ForConditionalGeneration.from_pretrained("VietAI/vit5-base").to(device)
    optimizer = AdamW(model.parameters(), lr=3e-5)
    train(model, optimizer, tokenizer, epochs, train_dataloader, saving_path="ckpt/vit5", device=device)
