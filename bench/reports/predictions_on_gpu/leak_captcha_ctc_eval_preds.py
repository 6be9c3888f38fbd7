# Source: https://github.com/abhishekkrthakur/captcha-recognition-pytorch/blob/7add22c2fdf1e087b0a47aa1c6e634507dc3bc79/engine.py
# Report: audit: eval_fn() runs under torch.no_grad() but appends every batch's raw CTC logits (model output on config.DEVICE) to fin_preds and returns the list, so the whole validation set's outputs sit on the GPU until decoding after the epoch
# Shape: engine-style train_fn/eval_fn with a dict batch unpacked into model(**data) that returns (preds, loss); the run loop decodes the kept GPU batches afterwards
# Expect: TML004 line 36
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
            fin_preds.append(batch_preds)  # expect: TML004
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
