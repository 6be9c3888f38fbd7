# Source: https://github.com/chrischoy/SpatioTemporalSegmentation/issues/46
# Report: a user flagged train.py because loss.backward() runs inside the sub_iter loop while optimizer.zero_grad() sits outside it; the structure is deliberate gradient accumulation over config.iter_size sub-batches (each loss is divided by iter_size).
# Shape: zero_grad once per outer iteration, backward for every sub-batch in the inner loop, then one optimizer.step(): gradients are reset on every path of the loop that steps, so it must stay silent.
# Expect: near-miss: must be silent
import torch
import MinkowskiEngine as ME


def train(model, data_loader, val_data_loader, config, criterion, optimizer, scheduler, device):
    model.train()
    data_iter = iter(data_loader)
    curr_iter, epoch, is_training = 1, 1, True
    while is_training:
        for iteration in range(len(data_loader) // config.iter_size):
            optimizer.zero_grad()
            batch_loss = 0.0
            for sub_iter in range(config.iter_size):
                try:
                    coords, feats, target = next(data_iter)
                except StopIteration:
                    data_iter = iter(data_loader)
                    coords, feats, target = next(data_iter)
                    epoch += 1
                sinput = ME.SparseTensor(feats, coords, device=device)
                soutput = model(sinput)
                loss = criterion(soutput.F, target.long().to(device))
                loss /= config.iter_size
                batch_loss += loss.item()
                loss.backward()

            optimizer.step()
            scheduler.step()

            if curr_iter % config.stat_freq == 0:
                print("Iter {} epoch {}: loss {:.4f}, lr {:.2e}".format(
                    curr_iter, epoch, batch_loss, scheduler.get_last_lr()[0]))
            if curr_iter % config.val_freq == 0:
                validate(model, val_data_loader, device)
                model.train()
            if curr_iter >= config.max_iter:
                is_training = False
                break
            curr_iter += 1


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    hits = total = 0
    for coords, feats, target in loader:
        out = model(ME.SparseTensor(feats, coords, device=device))
        hits += (out.F.argmax(1).cpu() == target).sum().item()
        total += target.numel()
    return hits / max(total, 1)
