# Source: https://github.com/AlvinYH/Faster-VoxelPose/blob/733aa9856f277498e4be40cd97105138c90b2ca8/lib/core/function.py
# Report: the 2023 rewrite of validate() keeps every batch's fused 3D poses (a CUDA model output) in a list and concatenates them on the GPU for the dataset's evaluate(); the 2022 version moved each batch to numpy first
# Shape: fused_poses comes out of the model under no_grad (no graph) but stays a device tensor; the list lives for the whole validation loader
# Expect: TML004 line 57
import logging
import time

import torch

logger = logging.getLogger(__name__)


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def validate(config, backbone, model, loader, has_evaluate_function=False):
    batch_time = AverageMeter()
    data_time = AverageMeter()

    model.eval()
    if backbone is not None:
        backbone.eval()

    cameras = loader.dataset.cameras
    resize_transform = torch.as_tensor(loader.dataset.resize_transform, dtype=torch.float, device=config.DEVICE)

    with torch.no_grad():
        all_fused_poses = []
        end = time.time()
        for i, (inputs, _, meta, input_heatmaps) in enumerate(loader):
            data_time.update(time.time() - end)
            if config.DATASET.TEST_HEATMAP_SRC == 'image':
                inputs = inputs.to(config.DEVICE)
                fused_poses, plane_poses, proposal_centers, input_heatmaps, _ = model(
                    backbone=backbone, views=inputs, meta=meta,
                    cameras=cameras, resize_transform=resize_transform)
            else:
                input_heatmaps = input_heatmaps.to(config.DEVICE)
                fused_poses, plane_poses, proposal_centers, _, _ = model(
                    backbone=backbone, meta=meta, input_heatmaps=input_heatmaps,
                    cameras=cameras, resize_transform=resize_transform)

            all_fused_poses.append(fused_poses)  # expect: TML004

            batch_time.update(time.time() - end)
            end = time.time()
            if i % config.PRINT_FREQ == 0 or i == len(loader) - 1:
                mem = torch.cuda.memory_allocated(0)
                logger.info('Test: [%d/%d] time %.3fs (%.3fs) data %.3fs memory %.1f',
                            i, len(loader), batch_time.val, batch_time.avg, data_time.val, mem)

        all_fused_poses = torch.cat(all_fused_poses, dim=0)

    if not has_evaluate_function:
        return 0.0

    metric, msg = loader.dataset.evaluate(all_fused_poses)
    logger.info(msg)
    return metric
