# Source: https://github.com/abhishekkrthakur/bert-entity-extraction/blob/ca77f30a60c243f22f767493ffc48fe911238622/src/engine.py
# Report: audit: eval_fn() of the BERT NER engine runs the BERT forward over the validation loader after model.eval() without torch.no_grad(); fixed here by decorating eval_fn with @torch.no_grad()
# Shape: same engine and training script; the evaluation function is grad-disabled by its decorator rather than a with-block, so the forward inside its loop saves no activations
# Expect: near-miss: must be silent
import numpy as np
import torch
import transformers
from sklearn import model_selection
from tqdm import tqdm

import config
import dataset
from model import EntityModel


def train_fn(data_loader, model, optimizer, device, scheduler):
    model.train()
    final_loss = 0
    for data in tqdm(data_loader, total=len(data_loader)):
        for k, v in data.items():
            data[k] = v.to(device)
        optimizer.zero_grad()
        _, _, loss = model(**data)
        loss.backward()
        optimizer.step()
        scheduler.step()
        final_loss += loss.item()
    return final_loss / len(data_loader)


@torch.no_grad()
def eval_fn(data_loader, model, device):
    model.eval()
    final_loss = 0
    for data in tqdm(data_loader, total=len(data_loader)):
        for k, v in data.items():
            data[k] = v.to(device)
        _, _, loss = model(**data)
        final_loss += loss.item()
    return final_loss / len(data_loader)


def run(sentences, pos, tag, num_pos, num_tag):
    (train_sentences, test_sentences, train_pos, test_pos,
     train_tag, test_tag) = model_selection.train_test_split(sentences, pos, tag, random_state=42, test_size=0.1)
    train_loader = torch.utils.data.DataLoader(
        dataset.EntityDataset(texts=train_sentences, pos=train_pos, tags=train_tag),
        batch_size=config.TRAIN_BATCH_SIZE, num_workers=4)
    valid_loader = torch.utils.data.DataLoader(
        dataset.EntityDataset(texts=test_sentences, pos=test_pos, tags=test_tag),
        batch_size=config.VALID_BATCH_SIZE, num_workers=1)

    device = torch.device("cuda")
    model = EntityModel(num_tag=num_tag, num_pos=num_pos).to(device)
    no_decay = ["bias", "LayerNorm.bias", "LayerNorm.weight"]
    params = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": 0.001},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    num_train_steps = int(len(train_sentences) / config.TRAIN_BATCH_SIZE * config.EPOCHS)
    optimizer = torch.optim.AdamW(params, lr=3e-5)
    scheduler = transformers.get_linear_schedule_with_warmup(
        optimizer, num_warmup_steps=0, num_training_steps=num_train_steps)

    best_loss = np.inf
    for epoch in range(config.EPOCHS):
        train_loss = train_fn(train_loader, model, optimizer, device, scheduler)
        test_loss = eval_fn(valid_loader, model, device)
        print(f"Epoch {epoch}: train loss = {train_loss} valid loss = {test_loss}")
        if test_loss < best_loss:
            torch.save(model.state_dict(), config.MODEL_PATH)
            best_loss = test_loss
