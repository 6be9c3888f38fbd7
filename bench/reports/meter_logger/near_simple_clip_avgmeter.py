# Source: https://github.com/moein-shariatnia/OpenAI-CLIP/blob/master/main.py
# Report: Simple CLIP (image/text contrastive) training loop logs each batch loss into an AvgMeter with loss.item(); valid_epoch itself has no no_grad, its caller main() wraps it in torch.no_grad()
# Shape: train_epoch calls loss_meter.update(loss.item(), count) so AvgMeter.update's self.sum += val * count only sees Python floats; valid_epoch forwards in eval mode without a local no_grad but only ever runs inside main()'s `with torch.no_grad():`
# Expect: near-miss: must be silent
import torch
from torch import nn
import torch.nn.functional as F
from tqdm import tqdm

DEVICE = torch.device("cuda")


class AvgMeter:
    def __init__(self, name="Metric"):
        self.name = name
        self.reset()

    def reset(self):
        self.avg, self.sum, self.count = [0] * 3

    def update(self, val, count=1):
        self.count += count
        self.sum += val * count
        self.avg = self.sum / self.count

    def __repr__(self):
        return f"{self.name}: {self.avg:.4f}"


def get_lr(optimizer):
    for param_group in optimizer.param_groups:
        return param_group["lr"]


class CLIPModel(nn.Module):
    def __init__(self, image_encoder, text_encoder, temperature=1.0):
        super().__init__()
        self.image_encoder = image_encoder
        self.text_encoder = text_encoder
        self.temperature = temperature

    def forward(self, batch):
        image_embeddings = self.image_encoder(batch["image"])
        text_embeddings = self.text_encoder(batch["input_ids"], batch["attention_mask"])
        logits = (text_embeddings @ image_embeddings.T) / self.temperature
        images_similarity = image_embeddings @ image_embeddings.T
        texts_similarity = text_embeddings @ text_embeddings.T
        targets = F.softmax((images_similarity + texts_similarity) / 2 * self.temperature, dim=-1)
        texts_loss = (-targets * F.log_softmax(logits, dim=-1)).sum(1)
        images_loss = (-targets.T * F.log_softmax(logits.T, dim=-1)).sum(1)
        return ((images_loss + texts_loss) / 2.0).mean()


def train_epoch(model, train_loader, optimizer, lr_scheduler, step):
    loss_meter = AvgMeter()
    tqdm_object = tqdm(train_loader, total=len(train_loader))
    for batch in tqdm_object:
        batch = {k: v.to(DEVICE) for k, v in batch.items() if k != "caption"}
        loss = model(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == "batch":
            lr_scheduler.step()

        count = batch["image"].size(0)
        loss_meter.update(loss.item(), count)

        tqdm_object.set_postfix(train_loss=loss_meter.avg, lr=get_lr(optimizer))
    return loss_meter


def valid_epoch(model, valid_loader):
    loss_meter = AvgMeter()
    tqdm_object = tqdm(valid_loader, total=len(valid_loader))
    for batch in tqdm_object:
        batch = {k: v.to(DEVICE) for k, v in batch.items() if k != "caption"}
        loss = model(batch)
        count = batch["image"].size(0)
        loss_meter.update(loss.item(), count)
        tqdm_object.set_postfix(valid_loss=loss_meter.avg)
    return loss_meter


def main(model, train_loader, valid_loader, epochs=4):
    model = model.to(DEVICE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-3)
    lr_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", patience=1, factor=0.8)
    best_loss = float("inf")
    for epoch in range(epochs):
        model.train()
        train_loss = train_epoch(model, train_loader, optimizer, lr_scheduler, "epoch")
        model.eval()
        with torch.no_grad():
            valid_loss = valid_epoch(model, valid_loader)
        if valid_loss.avg < best_loss:
            best_loss = valid_loss.avg
            torch.save(model.state_dict(), "best.pt")
        lr_scheduler.step(valid_loss.avg)
        print(f"epoch {epoch + 1}: {train_loss} {valid_loss}")
