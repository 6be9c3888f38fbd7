# Source: https://github.com/Tianxiaomo/pytorch-YOLOv4/blob/00b284040ef1d8564fd9c4d9ee115459dfb617ad/train.py
# Report: train.py as published: the YOLOv4 train() loop accumulates epoch_loss += loss.item()
# Shape: same per-epoch epoch_loss = 0 and batch loop; the scaled loss is turned into a Python float before it is added, so no graph outlives the step
# Expect: near-miss: must be silent

import logging
import os

import torch
import torch.optim as optim
from torch.utils.data import DataLoader
from tqdm import tqdm

from dataset import Yolo_dataset
from cfg import Cfg
from models import Yolo_loss


def train(model, device, config, epochs=5, batch_size=1, save_cp=True, log_step=20):
    train_dataset = Yolo_dataset(config.train_label, config)
    n_train = len(train_dataset)
    train_loader = DataLoader(train_dataset, batch_size=config.batch // config.subdivisions,
                              shuffle=True, num_workers=8, pin_memory=True, drop_last=True)

    global_step = 0
    optimizer = optim.Adam(model.parameters(), lr=config.learning_rate, betas=(0.9, 0.999), eps=1e-08)
    criterion = Yolo_loss(device=device, batch=config.batch // config.subdivisions, n_classes=config.classes)

    for epoch in range(epochs):
        model.train()
        epoch_loss = 0
        epoch_step = 0

        with tqdm(total=n_train, desc=f"Epoch {epoch + 1}/{epochs}", unit="img", ncols=50) as pbar:
            for i, batch in enumerate(train_loader):
                global_step += 1
                epoch_step += 1
                images = batch[0].to(device=device, dtype=torch.float32)
                bboxes = batch[1].to(device=device)

                bboxes_pred = model(images)
                loss, loss_xy, loss_wh, loss_obj, loss_cls, loss_l2 = criterion(bboxes_pred, bboxes)
                loss = loss / config.subdivisions
                loss.backward()

                epoch_loss += loss.item()

                if i % config.subdivisions == 0:
                    optimizer.step()
                    model.zero_grad()

                if epoch_step % log_step == 0:
                    pbar.set_postfix(**{"loss (batch)": loss.item(), "loss_xy": loss_xy.item(),
                                        "loss_wh": loss_wh.item(), "loss_obj": loss_obj.item(),
                                        "loss_cls": loss_cls.item(), "loss_l2": loss_l2.item()})
                pbar.update(images.shape[0])

            logging.info(f"Epoch {epoch + 1} mean loss: {epoch_loss / max(epoch_step, 1)}")
            if save_cp:
                os.makedirs(config.checkpoints, exist_ok=True)
                torch.save(model.state_dict(), os.path.join(config.checkpoints, f"Yolov4_epoch{epoch + 1}.pth"))
                logging.info(f"Checkpoint {epoch + 1} saved !")


if __name__ == "__main__":
    from models import Yolov4

    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(message)s")
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = Yolov4(Cfg.pretrained, n_classes=Cfg.classes).to(device=dev)
    train(model=net, device=dev, config=Cfg, epochs=Cfg.TRAIN_EPOCHS, batch_size=Cfg.batch)
