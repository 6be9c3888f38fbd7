# Source: https://github.com/open-mmlab/OpenPCDet/issues/460
# Report: training PV-RCNN in OpenPCDet with a detectron2 2D model run inside the dataset's data loading fails with "Cannot re-initialize CUDA in forked subprocess"; the only answer was to use --workers 0
# Shape: the rewrite's KittiDataset.__getitem__ calls a helper _paint_points that moves the camera image to the GPU and runs the 2D segmenter there, so every DataLoader worker touches CUDA
# Expect: TML010 line 51
import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset


class KittiPaintedDataset(Dataset):
    def __init__(self, dataset_cfg, class_names, kitti_infos, seg_model, training=True):
        self.dataset_cfg = dataset_cfg
        self.class_names = class_names
        self.kitti_infos = kitti_infos
        self.training = training
        self.seg_model = seg_model.eval()

    def __len__(self):
        return len(self.kitti_infos)

    def get_lidar(self, idx):
        lidar_file = self.dataset_cfg.ROOT / 'velodyne' / ('%s.bin' % idx)
        return np.fromfile(str(lidar_file), dtype=np.float32).reshape(-1, 4)

    def get_image(self, idx):
        from skimage import io
        img_file = self.dataset_cfg.ROOT / 'image_2' / ('%s.png' % idx)
        return io.imread(img_file).astype(np.float32) / 255.0

    def __getitem__(self, index):
        info = copy.deepcopy(self.kitti_infos[index])
        sample_idx = info['point_cloud']['lidar_idx']
        calib = info['calib']
        points = self.get_lidar(sample_idx)
        image = self.get_image(sample_idx)

        points = self._paint_points(points, image, calib)

        input_dict = {'points': points, 'frame_id': sample_idx, 'calib': calib}
        if 'annos' in info:
            annos = info['annos']
            input_dict['gt_names'] = annos['name']
            input_dict['gt_boxes'] = annos['gt_boxes_lidar']
        input_dict['image_shape'] = info['image']['image_shape']
        return input_dict

    def _paint_points(self, points, image, calib):
        img = torch.from_numpy(image).permute(2, 0, 1).unsqueeze(0).cuda()  # expect: TML010
        with torch.no_grad():
            scores = F.softmax(self.seg_model(img), dim=1)[0]
        pts_img, _ = calib.lidar_to_img(points[:, 0:3])
        u = np.clip(pts_img[:, 0].astype(np.int64), 0, image.shape[1] - 1)
        v = np.clip(pts_img[:, 1].astype(np.int64), 0, image.shape[0] - 1)
        point_scores = scores[:, v, u].t().cpu().numpy()
        return np.concatenate([points, point_scores], axis=1)


def build_dataloader(dataset_cfg, class_names, infos, seg_model, batch_size, workers=4):
    dataset = KittiPaintedDataset(dataset_cfg, class_names, infos, seg_model)
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, pin_memory=True, num_workers=workers,
        shuffle=True, collate_fn=lambda batch: batch, drop_last=False)
