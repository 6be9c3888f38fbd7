# Source: https://github.com/CVC-Color/DeepIntrinsicRelighting/issues/2
# Report: GPU memory kept increasing during test_quantitative.py because per-image metric results stayed on the GPU in a list; fix per the maintainer: take them off the device before storing
# Shape: fixed version: the same helper returns 0-dim CUDA tensors, but the loop stores Python floats (.item()) in the dict of lists
# Expect: near-miss: must be silent
import lpips
import torch
import torch.nn.functional as F
from pytorch_msssim import ssim

from data import create_dataset
from models import create_model
from options.test_options import TestOptions


class AllMetrics:
    def __init__(self):
        self.loss_lpips = lpips.LPIPS(net="alex").cuda()

    def calculate_lpips(self, x, y):
        dist = self.loss_lpips.forward(x * 2 - 1, y * 2 - 1)
        return dist.detach().mean()

    def image_metric(self, visuals, gt_label, predict_label):
        gt, pred = visuals[gt_label], visuals[predict_label]
        ssim_val = ssim(gt, pred, data_range=1.0, size_average=True)
        mse_value = F.mse_loss(gt, pred)
        psnr_value = 10 * torch.log10(1.0 / mse_value)
        return [mse_value, ssim_val, psnr_value, self.calculate_lpips(gt, pred)]

    def run(self, visuals, metric_labels):
        all_results = {}
        for key in metric_labels:
            if key == "Reconstruct":
                all_results[key] = self.image_metric(visuals, "Image_input", "Reconstruct")
            elif key == "Input_and_relighted_gt":
                all_results[key] = self.image_metric(visuals, "Image_input", "Relighted_gt")
            else:
                all_results[key] = self.image_metric(visuals, key + "_gt", key + "_predict")
        return all_results


if __name__ == "__main__":
    opt = TestOptions().parse()
    dataset = create_dataset(opt)
    model = create_model(opt)
    model.setup(opt)
    if opt.eval:
        model.eval()
    metric_results = {key: [] for key in opt.metric_list}
    metric_function = AllMetrics()
    for i, data in enumerate(dataset):
        if i >= opt.num_test:
            break
        model.set_input(data)
        model.test()  # forward under torch.no_grad() inside the model class
        visuals = model.get_current_visuals()
        all_results = metric_function.run(visuals, metric_results.keys())
        for key in metric_results.keys():
            metric_results[key].append([value.item() for value in all_results[key]])
    for key in metric_results.keys():
        results_mean = torch.tensor(metric_results[key]).mean(0)
        print("{}: MSE, SSIM, PSNR, LPIPS = {:.4f}, {:.4f}, {:.4f}, {:.4f}".format(
            key, results_mean[0], results_mean[1], results_mean[2], results_mean[3]))
