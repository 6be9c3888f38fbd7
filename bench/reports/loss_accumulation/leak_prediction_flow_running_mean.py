# Source: https://github.com/GitHub-HongweiZhang/prediction-flow/blob/01679142d6f65fefc73ae3c6dcd197186f507e95/prediction_flow/pytorch/functions.py
# Report: users of the CTR library (DNN/DIN/DIEN on ad-click data) saw memory grow every epoch until the process died; fit() keeps an incremental running mean of the loss per batch (also: report: https://github.com/GitHub-HongweiZhang/prediction-flow/issues/20)
# Shape: the running mean is updated from the loss tensor itself (no .item()), so running_loss is a graph-attached tensor that reads its own previous value: every batch's loss node stays chained to the epoch's running mean
# Expect: TML005 line 38; TML005 line 36; TML001 line 62
import torch
from tqdm import tqdm


def _to_gpu(device, batch):
    for key, tensor in batch.items():
        batch[key] = tensor.to(device)


def fit(epochs, model, loss, optimizer, train_loader, valid_loader=None,
        auxiliary_loss_rate=0.0):
    epoch_bar = tqdm(desc="training routine", total=epochs, position=0)
    train_bar = tqdm(desc="train", total=len(train_loader), position=1)
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda:0" if use_cuda else "cpu")
    model = model.to(device)

    losses = []
    for epoch in range(epochs):
        model.train()
        running_loss = 0
        auxiliary_running_loss = 0
        for index, batch in enumerate(train_loader):
            if use_cuda:
                _to_gpu(device, batch)
            label = batch["label"]
            optimizer.zero_grad()
            auxiliary_loss = torch.tensor(0.0, device=device)
            pred = model(batch)
            if isinstance(pred, tuple):
                pred, auxiliary_loss = pred
                auxiliary_running_loss += (auxiliary_loss - auxiliary_running_loss) / (index + 1)  # expect: TML005
            loss_t = loss(pred, label) + auxiliary_loss_rate * auxiliary_loss
            running_loss += (loss_t - running_loss) / (index + 1)  # expect: TML005
            loss_t.backward()
            optimizer.step()
            train_bar.set_postfix(loss=float(running_loss), epoch=index)
            train_bar.update()
        train_bar.reset()

        valid_loss = 0
        if valid_loader:
            model.eval()
            running = 0
            with torch.no_grad():
                for index, batch in enumerate(valid_loader):
                    if use_cuda:
                        _to_gpu(device, batch)
                    pred = model(batch)
                    if isinstance(pred, tuple):
                        pred, _ = pred
                    running += (loss(pred, batch["label"]).item() - running) / (index + 1)
            valid_loss = running

        epoch_bar.set_postfix(train_loss=float(running_loss), valid_loss=valid_loss)
        epoch_bar.update()
        stats = {"train_aux_loss": auxiliary_running_loss, "valid_loss": valid_loss}
        losses.append({"train_loss": running_loss, **stats})  # expect: TML001
    return losses
