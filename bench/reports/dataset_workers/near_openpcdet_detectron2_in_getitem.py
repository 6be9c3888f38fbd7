# Source: https://github.com/open-mmlab/OpenPCDet/issues/460
# Report: training PV-RCNN in OpenPCDet with a detectron2 2D model run inside the dataset's data loading fails with "Cannot re-initialize CUDA in forked subprocess"; the only answer was to use --workers 0 (source note: offline GPU pass as in create_groundtruth_database: https://github.com/open-mmlab/OpenPCDet/blob/8cacccec11db6f59bf6934600c9a175dae254806/pcdet/datasets/nuscenes/nuscenes_dataset.py)
# Shape: the 2D segmentation runs once, offline, in a dataset method create_painted_database (like OpenPCDet's create_groundtruth_database, which calls .cuda() on a Dataset in the main process); __getitem__ only reads the painted points from disk, CPU-only
# Expect: near-miss: must be silent
import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset


class KittiPaintedDataset(Dataset):
    def __init__(self, dataset_cfg, class_names, kitti_infos, training=True):
        self.dataset_cfg = dataset_cfg
        self.class_names = class_names
        self.kitti_infos = kitti_infos
        self.training = training

    def __len__(self):
        return len(self.kitti_infos)

    def get_lidar(self, idx):
        lidar_file = self.dataset_cfg.ROOT / 'velodyne' / ('%s.bin' % idx)
        return np.fromfile(str(lidar_file), dtype=np.float32).reshape(-1, 4)

    def get_image(self, idx):
        from skimage import io
        img_file = self.dataset_cfg.ROOT / 'image_2' / ('%s.png' % idx)
        return io.imread(img_file).astype(np.float32) / 255.0

    def get_painted_lidar(self, idx):
        painted_file = self.dataset_cfg.ROOT / 'painted_lidar' / ('%s.npy' % idx)
        return np.load(str(painted_file))

    def __getitem__(self, index):
        info = copy.deepcopy(self.kitti_infos[index])
        sample_idx = info['point_cloud']['lidar_idx']
        points = self.get_painted_lidar(sample_idx)

        input_dict = {'points': points, 'frame_id': sample_idx, 'calib': info['calib']}
        if 'annos' in info:
            annos = info['annos']
            input_dict['gt_names'] = annos['name']
            input_dict['gt_boxes'] = annos['gt_boxes_lidar']
        input_dict['image_shape'] = info['image']['image_shape']
        return input_dict

    def create_painted_database(self, seg_model):
        """Run once from the data-preparation script, in the main process."""
        seg_model = seg_model.cuda().eval()
        save_dir = self.dataset_cfg.ROOT / 'painted_lidar'
        save_dir.mkdir(parents=True, exist_ok=True)
        for info in self.kitti_infos:
            sample_idx = info['point_cloud']['lidar_idx']
            calib = info['calib']
            points = self.get_lidar(sample_idx)
            image = self.get_image(sample_idx)
            img = torch.from_numpy(image).permute(2, 0, 1).unsqueeze(0).cuda()
            with torch.no_grad():
                scores = F.softmax(seg_model(img), dim=1)[0]
            pts_img, _ = calib.lidar_to_img(points[:, 0:3])
            u = np.clip(pts_img[:, 0].astype(np.int64), 0, image.shape[1] - 1)
            v = np.clip(pts_img[:, 1].astype(np.int64), 0, image.shape[0] - 1)
            point_scores = scores[:, v, u].t().cpu().numpy()
            np.save(str(save_dir / ('%s.npy' % sample_idx)), np.concatenate([points, point_scores], axis=1))


def build_dataloader(dataset_cfg, class_names, infos, batch_size, workers=4):
    dataset = KittiPaintedDataset(dataset_cfg, class_names, infos)
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, pin_memory=True, num_workers=workers,
        shuffle=True, collate_fn=lambda batch: batch, drop_last=False)
