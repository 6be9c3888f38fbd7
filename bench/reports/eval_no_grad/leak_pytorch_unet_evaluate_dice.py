# Source: https://github.com/milesial/Pytorch-UNet/commit/0da18fda34f29c81968425715e19c5dc76c9ec46
# Report: the U-Net (Carvana/medical masks) validation round ran net(imgs) after net.eval() with no grad-disabled context; the fix wrapped the forward in torch.no_grad(), and the current evaluate() is decorated with @torch.inference_mode() (source also: later shape: https://github.com/milesial/Pytorch-UNet/blob/d786714b31783bb754e36d9b0d0bf238b1ba1a16/evaluate.py)
# Shape: evaluate() in its current shape but without the decorator: every validation batch's forward saves activations for a backward that never comes (peak per batch); dice_score adds thresholded/one-hot masks, which carry no graph, so only the forward is the pattern
# Expect: TML003 line 39
import torch
import torch.nn.functional as F
from torch import Tensor
from tqdm import tqdm


def dice_coeff(input: Tensor, target: Tensor, reduce_batch_first: bool = False, epsilon: float = 1e-6):
    assert input.size() == target.size()
    sum_dim = (-1, -2) if input.dim() == 2 or not reduce_batch_first else (-1, -2, -3)
    inter = 2 * (input * target).sum(dim=sum_dim)
    sets_sum = input.sum(dim=sum_dim) + target.sum(dim=sum_dim)
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
    dice = (inter + epsilon) / (sets_sum + epsilon)
    return dice.mean()


def multiclass_dice_coeff(input: Tensor, target: Tensor, reduce_batch_first: bool = False, epsilon: float = 1e-6):
    return dice_coeff(input.flatten(0, 1), target.flatten(0, 1), reduce_batch_first, epsilon)


def dice_loss(input: Tensor, target: Tensor, multiclass: bool = False):
    fn = multiclass_dice_coeff if multiclass else dice_coeff
    return 1 - fn(input, target, reduce_batch_first=True)


def evaluate(net, dataloader, device, amp):
    net.eval()
    num_val_batches = len(dataloader)
    dice_score = 0
    with torch.autocast(device.type if device.type != 'mps' else 'cpu', enabled=amp):
        for batch in tqdm(dataloader, total=num_val_batches, desc='Validation round', unit='batch', leave=False):
            image, mask_true = batch['image'], batch['mask']
            image = image.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
            mask_true = mask_true.to(device=device, dtype=torch.long)
            mask_pred = net(image)  # expect: TML003
            if net.n_classes == 1:
                mask_pred = (F.sigmoid(mask_pred) > 0.5).float()
                dice_score += dice_coeff(mask_pred, mask_true, reduce_batch_first=False)
            else:
                mask_true = F.one_hot(mask_true, net.n_classes).permute(0, 3, 1, 2).float()
                mask_pred = F.one_hot(mask_pred.argmax(dim=1), net.n_classes).permute(0, 3, 1, 2).float()
                dice_score += multiclass_dice_coeff(mask_pred[:, 1:], mask_true[:, 1:], reduce_batch_first=False)
    net.train()
    return dice_score / max(num_val_batches, 1)


def train_model(model, device, train_loader, val_loader, optimizer, scheduler, grad_scaler,
                criterion, epochs=5, amp=False, gradient_clipping=1.0):
    global_step = 0
    division_step = max(len(train_loader) // 5, 1)
    for epoch in range(1, epochs + 1):
        model.train()
        epoch_loss = 0
        for batch in train_loader:
            images = batch['image'].to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
            true_masks = batch['mask'].to(device=device, dtype=torch.long)
            with torch.autocast(device.type, enabled=amp):
                masks_pred = model(images)
                loss = criterion(masks_pred, true_masks)
                loss += dice_loss(F.softmax(masks_pred, dim=1).float(),
                                  F.one_hot(true_masks, model.n_classes).permute(0, 3, 1, 2).float(),
                                  multiclass=True)
            optimizer.zero_grad(set_to_none=True)
            grad_scaler.scale(loss).backward()
            grad_scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)
            grad_scaler.step(optimizer)
            grad_scaler.update()
            global_step += 1
            epoch_loss += loss.item()
            if global_step % division_step == 0:
                val_score = evaluate(model, val_loader, device, amp)
                scheduler.step(val_score)
                print('Validation Dice score: {}'.format(float(val_score)))
