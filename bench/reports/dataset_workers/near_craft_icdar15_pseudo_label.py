# Source: https://github.com/backtime92/CRAFT-Reimplementation/issues/7
# Report: ICDAR2015 dataset ran the CRAFT net on the GPU inside the Dataset; with num_workers > 0 that fails with "CUDA error: initialization error" (source note: data_loader.py at 1add6d43943acde930b04c95389c9d68c84897d9)
# Shape: the Dataset only prepares CPU word crops; the crops go to the GPU and through the net in the training loop, in the main process
# Expect: near-miss: must be silent
import os

import cv2
import numpy as np
import torch
import torch.utils.data as data


class craft_base_dataset(data.Dataset):
    def __init__(self, target_size=768):
        self.target_size = target_size

    def crop_image_by_bbox(self, image, box):
        w = int(np.linalg.norm(box[0] - box[1]))
        h = int(np.linalg.norm(box[0] - box[3]))
        M = cv2.getPerspectiveTransform(
            np.float32(box), np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        )
        return cv2.warpPerspective(image, M, (w, h)), M

    def word_crop_tensor(self, image, word_bbox):
        word_image, _ = self.crop_image_by_bbox(image, word_bbox)
        crop = cv2.resize(word_image, (128, 64))
        mean = np.array([0.485, 0.456, 0.406]) * 255.0
        std = np.array([0.229, 0.224, 0.225]) * 255.0
        normed = (crop.astype(np.float32) - mean) / std
        img_torch = torch.from_numpy(normed).permute(2, 0, 1)
        return img_torch.type(torch.FloatTensor)  # stays on the CPU in the worker


class ICDAR2015(craft_base_dataset):
    def __init__(self, icdar2015_folder, target_size=768, max_words=16):
        super().__init__(target_size)
        self.max_words = max_words
        self.img_folder = os.path.join(icdar2015_folder, "ch4_training_images")
        self.gt_folder = os.path.join(icdar2015_folder, "ch4_training_localization_transcription_gt")
        self.images_path = sorted(os.listdir(self.img_folder))

    def __len__(self):
        return len(self.images_path)

    def load_gt(self, gt_path):
        bboxes, words = [], []
        for line in open(gt_path, encoding="utf-8-sig"):
            parts = line.strip().split(",")
            bboxes.append(np.array([int(v) for v in parts[:8]], np.float32).reshape(4, 2))
            words.append(",".join(parts[8:]))
        return bboxes, words

    def __getitem__(self, index):
        name = self.images_path[index]
        word_bboxes, words = self.load_gt(os.path.join(self.gt_folder, "gt_%s.txt" % os.path.splitext(name)[0]))
        image = cv2.cvtColor(cv2.imread(os.path.join(self.img_folder, name)), cv2.COLOR_BGR2RGB)
        crops = torch.zeros(self.max_words, 3, 64, 128)
        kept = [b for b, w in zip(word_bboxes, words) if w != "###"][: self.max_words]
        for i, box in enumerate(kept):
            crops[i] = self.word_crop_tensor(image, box)
        image = cv2.resize(image, (self.target_size, self.target_size))
        image = torch.from_numpy(image).float().permute(2, 0, 1)
        return image, crops, len(kept)


def build_icdar_loader(root):
    dataset = ICDAR2015(root, target_size=768)
    return data.DataLoader(dataset, batch_size=4, shuffle=True, num_workers=4, drop_last=True, pin_memory=True)


def pseudo_label_step(net, loader):
    net.eval()
    for images, crops, n_words in loader:
        images = images.cuda(non_blocking=True)
        crops = crops.cuda(non_blocking=True)
        with torch.no_grad():
            scores, _ = net(crops.flatten(0, 1))
        region_scores = scores[..., 0].cpu().numpy()
        yield images, region_scores, n_words
