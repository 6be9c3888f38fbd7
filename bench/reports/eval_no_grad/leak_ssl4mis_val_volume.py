# Source: https://github.com/HiLab-git/SSL4MIS/blob/06df6047a59aba9988ced8331998b5957ecb356b/code/val_2D.py
# Report: SSL4MIS mean-teacher trainer validates every 200 iterations through test_single_volume, which runs each slice under torch.no_grad(); this variant drops the no_grad in the helper
# Shape: the helper calls net.eval() then net(input) slice by slice with grad enabled: every slice's activations are saved for a backward that never comes (peak per slice, during training)
# Expect: TML003 line 36
import numpy as np
import torch
import torch.nn.functional as F
from medpy import metric
from scipy.ndimage import zoom


def calculate_metric_percase(pred, gt):
    pred[pred > 0] = 1
    gt[gt > 0] = 1
    if pred.sum() > 0:
        return metric.binary.dc(pred, gt), metric.binary.hd95(pred, gt)
    return 0, 0


def update_ema_variables(model, ema_model, alpha, global_step):
    alpha = min(1 - 1 / (global_step + 1), alpha)
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)


def test_single_volume(image, label, net, classes, patch_size=(256, 256)):
    image = image.squeeze(0).cpu().detach().numpy()
    label = label.squeeze(0).cpu().detach().numpy()
    prediction = np.zeros_like(label)
    for ind in range(image.shape[0]):
        sl = image[ind, :, :]
        x, y = sl.shape
        sl = zoom(sl, (patch_size[0] / x, patch_size[1] / y), order=0)
        inp = torch.from_numpy(sl).unsqueeze(0).unsqueeze(0).float().cuda()
        net.eval()
        out = torch.argmax(torch.softmax(net(inp), dim=1), dim=1).squeeze(0)  # expect: TML003
        out = out.cpu().detach().numpy()
        prediction[ind] = zoom(out, (x / patch_size[0], y / patch_size[1]), order=0)
    return [calculate_metric_percase(prediction == i, label == i) for i in range(1, classes)]


def train_mean_teacher(model, ema_model, trainloader, valloader, n_val, args, writer):
    optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr, momentum=0.9, weight_decay=1e-4)
    iter_num = 0
    model.train()
    while iter_num < args.max_iterations:
        for sampled_batch in trainloader:
            volume_batch = sampled_batch["image"].cuda()
            label_batch = sampled_batch["label"].cuda()
            unlabeled = volume_batch[args.labeled_bs:]
            ema_inputs = unlabeled + torch.clamp(torch.randn_like(unlabeled) * 0.1, -0.2, 0.2)

            outputs = model(volume_batch)
            outputs_soft = torch.softmax(outputs, dim=1)
            with torch.no_grad():
                ema_output_soft = torch.softmax(ema_model(ema_inputs), dim=1)

            supervised_loss = F.cross_entropy(outputs[:args.labeled_bs], label_batch[:args.labeled_bs].long())
            consistency_loss = torch.mean((outputs_soft[args.labeled_bs:] - ema_output_soft) ** 2)
            loss = supervised_loss + args.consistency * consistency_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            update_ema_variables(model, ema_model, args.ema_decay, iter_num)

            iter_num += 1
            writer.add_scalar("info/total_loss", loss, iter_num)

            if iter_num % 200 == 0:
                model.eval()
                metric_list = 0.0
                for val_batch in valloader:
                    metric_i = test_single_volume(val_batch["image"], val_batch["label"], model, classes=args.num_classes)
                    metric_list += np.array(metric_i)
                metric_list = metric_list / n_val
                writer.add_scalar("info/val_mean_dice", np.mean(metric_list, axis=0)[0], iter_num)
                model.train()
            if iter_num >= args.max_iterations:
                break
