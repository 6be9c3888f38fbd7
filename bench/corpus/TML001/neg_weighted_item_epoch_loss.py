# Modelled on: https://discuss.pytorch.org/t/cuda-out-of-memory-after-more-than-8000-iterators/27253
# Report: a user already used `loss_sum += loss.item()` and still hit OOM; the accumulation itself was not the cause.
import torch as T
from tqdm import tqdm


def train_epoch(net, loader, opt, crit, device):
    net.train()
    epoch_loss = 0.0
    seen = 0
    for head, rel, tail in tqdm(loader):
        head = head.to(device)
        score = net(head, rel.to(device))
        loss = crit(score, tail.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        epoch_loss += loss.item() * head.size(0)
        seen += head.size(0)
    return epoch_loss / seen
