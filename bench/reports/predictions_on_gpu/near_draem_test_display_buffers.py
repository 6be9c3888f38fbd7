# Source: https://github.com/VitjanZ/DRAEM/issues/2
# Report: test_DRAEM.py ran out of GPU memory partway through a class: the test loop had no no_grad, and copying reconstruction and mask slices into the preallocated CUDA display buffers tied every displayed batch's autograd graph to those buffers
# Shape: same per-class evaluation function with the loader loop wrapped in torch.no_grad() (the fix suggested in the thread), so the slices written into the display buffers carry no graph
# Expect: near-miss: must be silent
import numpy as np
import torch
from sklearn.metrics import roc_auc_score


def test_on_class(model, model_seg, dataloader, img_dim=256, n_display=16):
    model.cuda().eval()
    model_seg.cuda().eval()

    display_images = torch.zeros((n_display, 3, img_dim, img_dim)).cuda()
    display_gt_images = torch.zeros((n_display, 3, img_dim, img_dim)).cuda()
    display_out_masks = torch.zeros((n_display, 1, img_dim, img_dim)).cuda()
    display_indices = np.random.randint(len(dataloader), size=(n_display,))
    cnt_display = 0

    image_scores, image_labels = [], []
    with torch.no_grad():
        for i_batch, sample_batched in enumerate(dataloader):
            gray_batch = sample_batched["image"].cuda()
            is_normal = sample_batched["has_anomaly"].detach().numpy()[0, 0]
            image_labels.append(is_normal)

            gray_rec = model(gray_batch)
            joined_in = torch.cat((gray_rec.detach(), gray_batch), dim=1)
            out_mask = model_seg(joined_in)
            out_mask_sm = torch.softmax(out_mask, dim=1)

            if i_batch in display_indices:
                t_mask = out_mask_sm[:, 1:, :, :]
                display_images[cnt_display] = gray_rec[0]
                display_gt_images[cnt_display] = gray_batch[0]
                display_out_masks[cnt_display] = t_mask[0]
                cnt_display += 1

            out_mask_cv = out_mask_sm[0, 1, :, :].detach().cpu().numpy()
            out_mask_avg = torch.nn.functional.avg_pool2d(out_mask_sm[:, 1:, :, :], 21, stride=1, padding=10)
            image_scores.append(float(out_mask_avg.max().item()))

    auroc = roc_auc_score(np.array(image_labels), np.array(image_scores))
    return auroc, display_images, display_gt_images, display_out_masks
