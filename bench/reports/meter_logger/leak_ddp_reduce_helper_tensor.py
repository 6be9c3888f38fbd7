# Source: https://github.com/zgcr/SimpleAICV_pytorch_training_examples/blob/19a0798b832c33255cc4c552402ad4eab755ca1a/tools/scripts.py
# Report: audit of SimpleAICV train_classification(), leaking variant it avoids: the loss is all-reduced in place by a helper and fed to AverageMeter.update (self.sum += val * n); if the helper returns the reduced tensor instead of .item(), the meter's running sum is the attached loss graph of every optimizer step of the epoch
# Shape: [loss] = reduce_across_ranks([loss]) returns the tensor itself, then meter.update(loss, n) keeps it in self.sum / self.val; accumulation by an iter_index counter with model.no_sync() and a GradScaler
# Expect: TML001 line 54
import torch
import torch.distributed as dist


class AverageMeter:
    def __init__(self):
        self.val, self.sum, self.count, self.avg = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def reduce_across_ranks(values, op=dist.ReduceOp.SUM, group=None):
    for i in range(len(values)):
        if not torch.is_tensor(values[i]):
            values[i] = torch.tensor(values[i]).cuda()
        dist.all_reduce(values[i], op=op, group=group)
    return values


def train_classification(train_loader, model, criterion, optimizer, scheduler, epoch, logger, config):
    losses = AverageMeter()
    model.train()
    rank = dist.get_rank()
    iters = len(train_loader.dataset) // config.batch_size
    iter_index = 1
    for data in train_loader:
        images, labels = data["image"].cuda(), data["label"].cuda()
        sync_now = iter_index % config.accumulation_steps == 0
        with torch.autocast("cuda", enabled=config.use_amp):
            if sync_now:
                loss = criterion(model(images), labels)
            else:
                with model.no_sync():
                    loss = criterion(model(images), labels)
        if torch.isnan(loss) or torch.isinf(loss):
            optimizer.zero_grad()
            continue
        loss = loss / config.accumulation_steps
        if sync_now:
            config.scaler.scale(loss).backward()
            config.scaler.step(optimizer)
            config.scaler.update()
            optimizer.zero_grad()
            [loss] = reduce_across_ranks([loss], group=config.group)
            loss = loss / float(config.gpus_num)
            losses.update(loss, images.size(0))  # expect: TML001
            scheduler.step(optimizer, iter_index / iters + (epoch - 1))
        else:
            with model.no_sync():
                config.scaler.scale(loss).backward()
        if iter_index % (config.print_interval * config.accumulation_steps) == 0 and rank == 0:
            logger.info(f"epoch {epoch:04d} iter {iter_index // config.accumulation_steps:05d} "
                        f"lr {scheduler.current_lr:.6f} loss {loss * config.accumulation_steps:.4f}")
        iter_index += 1
    return losses.avg * config.accumulation_steps
