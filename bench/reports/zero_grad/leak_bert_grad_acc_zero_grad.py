# Source: https://github.com/OlineStaerke/Ml_Ops_Project/blob/0c37cb13dcdd8673db0f299fb1ed05138a54abe8/src/models/train_model.py
# Report: the same BERT fine-tuning loop after the in-branch model.zero_grad() is dropped (it looks redundant next to the one at the top of the epoch)
# Shape: gradients are reset only once per epoch, before the batch loop; inside the loop every backward adds onto the gradients of all earlier batches, so each optimizer.step() applies a running sum (no memory growth, wrong updates)
# Expect: TML002 line 41
import numpy as np
import torch
from torch.optim import AdamW
from tqdm import tqdm
from transformers import AutoModelForSequenceClassification


def build_model(num_labels=2):
    return AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=num_labels)


def train(train_dataloader, dev_dataloader, epochs=5, grad_acc_steps=1, learning_rate=1e-5):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = build_model().to(device)
    optimizer = AdamW(model.parameters(), lr=learning_rate, eps=1e-8)
    train_loss_values = []
    dev_acc_values = []

    for _ in tqdm(range(epochs), desc="Epoch"):
        epoch_train_loss = 0
        model.train()
        model.zero_grad()

        for step, batch in enumerate(train_dataloader):
            input_ids = batch[0].to(device)
            attention_masks = batch[1].to(device)
            labels = batch[2].to(device)

            outputs = model(input_ids, token_type_ids=None, attention_mask=attention_masks, labels=labels)
            loss = outputs[0]
            loss = loss / grad_acc_steps
            epoch_train_loss += loss.item()
            loss.backward()

            if (step + 1) % grad_acc_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()  # expect: TML002

        train_loss_values.append(epoch_train_loss / len(train_dataloader))

        epoch_dev_accuracy = 0
        model.eval()
        for batch in dev_dataloader:
            input_ids = batch[0].to(device)
            attention_masks = batch[1].to(device)
            labels = batch[2]
            with torch.no_grad():
                outputs = model(input_ids, token_type_ids=None, attention_mask=attention_masks)
            logits = outputs[0].detach().cpu().numpy()
            predictions = np.argmax(logits, axis=1).flatten()
            epoch_dev_accuracy += np.sum(predictions == labels.numpy().flatten()) / len(labels)
        dev_acc_values.append(epoch_dev_accuracy / len(dev_dataloader))

    return model, train_loss_values, dev_acc_values
