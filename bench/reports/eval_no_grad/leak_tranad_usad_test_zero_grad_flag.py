# Source: https://github.com/imperial-qore/TranAD/blob/7ffb98d0c18189cc3d9ab732b4cb0278200a0af0/main.py
# Report: TranAD's testing phase sets `torch.zero_grad = True` (a plain module attribute, it disables nothing), calls model.eval() and runs the USAD test branch with grad enabled, stacking every window's outputs
# Shape: the USAD test branch moved into its own test function; every window's forward keeps its autograd graph and the three output lists keep all of them alive until the final torch.stack
# Expect: TML003 line 44; TML001 line 45
import numpy as np
import torch
import torch.nn as nn
from tqdm import tqdm

from src.models import USAD
from src.pot import pot_eval

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def backprop(epoch, model, data, optimizer, scheduler):
    l = nn.MSELoss(reduction='none')
    n = epoch + 1
    l1s, l2s = [], []
    for d in data:
        d = d.to(device)
        ae1s, ae2s, ae2ae1s = model(d)
        l1 = (1 / n) * l(ae1s, d) + (1 - 1 / n) * l(ae2ae1s, d)
        l2 = (1 / n) * l(ae2s, d) - (1 - 1 / n) * l(ae2ae1s, d)
        l1s.append(torch.mean(l1).item()); l2s.append(torch.mean(l2).item())
        loss = torch.mean(l1 + l2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
    tqdm.write(f'Epoch {epoch},\tL1 = {np.mean(l1s)},\tL2 = {np.mean(l2s)}')
    return np.mean(l1s) + np.mean(l2s), optimizer.param_groups[0]['lr']


def test_usad(model, data):
    """Anomaly scores for every window of `data` (testing phase)."""
    torch.zero_grad = True
    model.eval()
    l = nn.MSELoss(reduction='none')
    feats = data.shape[1] // model.n_window
    ae1s, ae2s, ae2ae1s = [], [], []
    for d in data:
        d = d.to(device)
        ae1, ae2, ae2ae1 = model(d)  # expect: TML003
        ae1s.append(ae1); ae2s.append(ae2); ae2ae1s.append(ae2ae1)  # expect: TML001
    ae1s, ae2s, ae2ae1s = torch.stack(ae1s), torch.stack(ae2s), torch.stack(ae2ae1s)
    data = data.to(device)
    y_pred = ae1s[:, data.shape[1] - feats:data.shape[1]].view(-1, feats)
    loss = 0.1 * l(ae1s, data) + 0.9 * l(ae2ae1s, data)
    loss = loss[:, data.shape[1] - feats:data.shape[1]].view(-1, feats)
    return loss.detach().cpu().numpy(), y_pred.detach().cpu().numpy()


def main(trainD, testD, labels, num_epochs=5):
    model = USAD(labels.shape[1]).double().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=model.lr, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 5, 0.9)
    accuracy_list = []
    for e in tqdm(list(range(num_epochs))):
        lossT, lr = backprop(e, model, trainD, optimizer, scheduler)
        accuracy_list.append((lossT, lr))

    loss, y_pred = test_usad(model, testD)
    lossT, _ = test_usad(model, trainD)
    lossTfinal, lossFinal = np.mean(lossT, axis=1), np.mean(loss, axis=1)
    labelsFinal = (np.sum(labels, axis=1) >= 1) + 0
    result, _ = pot_eval(lossTfinal, lossFinal, labelsFinal)
    return result, accuracy_list
