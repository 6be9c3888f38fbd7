# Source: https://github.com/meta-pytorch/data/issues/966
# Report: a webdataset DataPipe whose .collate(collate_fn) stacks the images/labels and moves them to CUDA fails with "Cannot re-initialize CUDA in forked subprocess" under a 4-worker reading service
# Shape: same DataPipe and collate_fn, but the collate function returns plain CPU tensors and the training loop (main process) moves each batch to the device
# Expect: near-miss: must be silent
from functools import partial

import torch
import torchvision.transforms as T
from torchdata.dataloader2 import DataLoader2, MultiProcessingReadingService
from torchdata.datapipes.iter import FileLister

BATCH_SIZE = 8
NUM_WORKERS = 4
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

train_tf = T.Compose([
    T.RandomResizedCrop(224),
    T.RandomHorizontalFlip(),
    T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


def decode(item, image_decoder, transform=train_tf):
    key, stream = item
    if key.endswith(".cls"):
        return key, int(stream.read().decode("utf-8"))
    return key, transform(image_decoder(key, stream.read()))


def collate_fn(batch):
    images = torch.stack([sample[".jpg"] for sample in batch])
    labels = torch.tensor([sample[".cls"] for sample in batch])
    return images, labels


def build_loader(root, image_decoder):
    pipe = (
        FileLister(root, "train*.tar")
        .shuffle()
        .sharding_filter()
        .open_files(mode="b")
        .load_from_tar()
        .map(partial(decode, image_decoder=image_decoder))
        .webdataset()
        .batch(BATCH_SIZE)
        .collate(collate_fn)
    )
    return DataLoader2(pipe, reading_service=MultiProcessingReadingService(num_workers=NUM_WORKERS))


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
