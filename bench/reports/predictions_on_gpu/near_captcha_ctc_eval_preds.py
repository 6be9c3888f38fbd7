# Source: https://github.com/abhishekkrthakur/captcha-recognition-pytorch/blob/7add22c2fdf1e087b0a47aa1c6e634507dc3bc79/engine.py
# Report: audit: eval_fn() runs under torch.no_grad() and keeps every batch's CTC logits in fin_preds for decoding after the epoch; fixed here by moving each batch to the host before it is kept
# Shape: same engine; fin_preds is still a list that outlives the loop and is decoded later, but it holds batch_preds.cpu() taken under no_grad, so nothing accumulates on the GPU
# Expect: near-miss: must be silent
import torch
from sklearn import metrics
from tqdm import tqdm

import config


def train_fn(model, data_loader, optimizer):
    model.train()
    fin_loss = 0
    for data in tqdm(data_loader, total=len(data_loader)):
        for key, value in data.items():
            data[key] = value.to(config.DEVICE)
        optimizer.zero_grad()
        _, loss = model(**data)
        loss.backward()
        optimizer.step()
        fin_loss += loss.item()
    return fin_loss / len(data_loader)


def eval_fn(model, data_loader):
    model.eval()
    with torch.no_grad():
        fin_loss = 0
        fin_preds = []
        for data in tqdm(data_loader, total=len(data_loader)):
            for key, value in data.items():
                data[key] = value.to(config.DEVICE)
            batch_preds, loss = model(**data)
            fin_loss += loss.item()
            fin_preds.append(batch_preds.cpu())
        return fin_preds, fin_loss / len(data_loader)


def decode_predictions(preds, encoder):
    # (T, B, C) logits -> greedy CTC strings
    best = torch.argmax(torch.softmax(preds.permute(1, 0, 2), 2), 2)
    best = best.detach().cpu().numpy()
    words = []
    for row in best:
        chars, prev = [], None
        for k in row:
            if k != prev and k != 0:
                chars.append(encoder.inverse_transform([k - 1])[0])
            prev = k
        words.append("".join(chars))
    return words


def run_training(model, train_loader, test_loader, test_targets_orig, lbl_enc):
    model.to(config.DEVICE)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.8, patience=5)
    for epoch in range(config.EPOCHS):
        train_loss = train_fn(model, train_loader, optimizer)
        valid_preds, test_loss = eval_fn(model, test_loader)
        valid_captcha_preds = []
        for vp in valid_preds:
            valid_captcha_preds.extend(decode_predictions(vp, lbl_enc))
        accuracy = metrics.accuracy_score(test_targets_orig, valid_captcha_preds)
        print(f"Epoch={epoch}, Train Loss={train_loss}, Test Loss={test_loss} Accuracy={accuracy}")
        scheduler.step(test_loss)
