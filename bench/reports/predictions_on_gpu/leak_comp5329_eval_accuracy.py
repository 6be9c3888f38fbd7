# Source: https://github.com/BilboBlockChain/COMP5329_research_track/blob/9025e840c4e79e0ea137ebe34d9a22717f5b7f88/utils.py
# Report: course project (RoBERTa intent classifier): after every epoch an eval() helper runs over the val, test and whole train loaders and keeps every batch's predictions and targets in lists
# Shape: forward is under no_grad, but argmax predictions and .cuda() targets are appended as CUDA tensors and only concatenated (three times) at the end, so the whole split sits on the GPU
# Expect: TML004 lines 32, 33
import numpy as np
import torch
import torch.nn as nn
from tqdm.auto import tqdm


class RoBERTaClassifier(nn.Module):
    def __init__(self, encoder, num_class):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(768, num_class)

    def forward(self, input_ids, mask):
        hidden = self.encoder(input_ids=input_ids, attention_mask=mask).last_hidden_state
        return self.head(hidden[:, 0])


def eval(dataload, model):
    out = []
    targ = []
    for batch in dataload:
        inputs = torch.stack(batch["input_ids"][0], dim=1).cuda()
        targets = batch["y"].cuda()
        mask = torch.stack(batch["attention_mask"][0], dim=1).cuda()
        with torch.no_grad():
            outputs = model(inputs, mask)
        predictions = torch.argmax(outputs, dim=-1)
        out.append(predictions)  # expect: TML004
        targ.append(targets)  # expect: TML004
    preds = torch.cat(out).squeeze()
    return torch.sum(preds == torch.cat(targ).squeeze()).detach().cpu().numpy() / len(preds)


def train(model, train_dataloader, val_dataloader, test_dataloader, num_epochs=5, lr=5e-5):
    device = torch.device("cuda")
    model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    for epoch in range(num_epochs):
        train_loss = 0
        model.train()
        with tqdm(train_dataloader, unit="batch") as tepoch:
            for batch in tepoch:
                inputs = torch.stack(batch["input_ids"][0], dim=1).to(device)
                targets = batch["y"].to(device)
                mask = torch.stack(batch["attention_mask"][0], dim=1).to(device)
                outputs = model(inputs, mask)
                optimizer.zero_grad()
                loss = criterion(outputs, targets)
                loss.backward()
                optimizer.step()
                batch_perf = outputs.detach().cpu().numpy().argmax(axis=1) == targets.cpu().numpy()
                train_loss += loss.item()
                tepoch.set_postfix(loss=loss.item(), batch_acc=float(np.mean(batch_perf)))
        model.eval()
        print(eval(val_dataloader, model))
        print(eval(test_dataloader, model))
        print(eval(train_dataloader, model))
