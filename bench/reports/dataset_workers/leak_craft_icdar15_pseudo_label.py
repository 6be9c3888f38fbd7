# Source: https://github.com/backtime92/CRAFT-Reimplementation/issues/7
# Report: ICDAR2015 dataset runs the CRAFT net inside the Dataset to make pseudo character boxes; img_torch.cuda() in inference_pursedo_bboxes fails with "CUDA error: initialization error" once num_workers > 0 (source note: data_loader.py at 1add6d43943acde930b04c95389c9d68c84897d9)
# Shape: the .cuda() lives in a Dataset helper method that __getitem__ reaches through pull_item / load_image_gt_and_confidencemask
# Expect: TML010 line 34
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

    def inference_pursedo_bboxes(self, net, image, word_bbox, word):
        word_image, MM = self.crop_image_by_bbox(image, word_bbox)
        scale = 64.0 / word_image.shape[0]
        crop = cv2.resize(word_image, None, fx=scale, fy=scale)
        mean = np.array([0.485, 0.456, 0.406]) * 255.0
        std = np.array([0.229, 0.224, 0.225]) * 255.0
        normed = (crop.astype(np.float32) - mean) / std
        img_torch = torch.from_numpy(normed).permute(2, 0, 1).unsqueeze(0)
        img_torch = img_torch.type(torch.FloatTensor)
        img_torch = img_torch.cuda()  # expect: TML010
        scores, _ = net(img_torch)
        region_scores = scores[0, :, :, 0].cpu().data.numpy()
        n_chars = max(len(word.replace(" ", "")), 1)
        width = crop.shape[1] / n_chars
        boxes = np.array(
            [[[i * width, 0], [(i + 1) * width, 0], [(i + 1) * width, crop.shape[0]], [i * width, crop.shape[0]]]
             for i in range(n_chars)],
            np.float32,
        ) / scale
        return boxes, region_scores, 0.5

    def load_image_gt_and_confidencemask(self, index):
        raise NotImplementedError

    def pull_item(self, index):
        image, character_bboxes, words, confidence_mask, confidences = self.load_image_gt_and_confidencemask(index)
        image = cv2.resize(image, (self.target_size, self.target_size))
        image = torch.from_numpy(image).float().permute(2, 0, 1)
        mask = torch.from_numpy(cv2.resize(confidence_mask, (self.target_size // 2, self.target_size // 2))).float()
        return image, mask, float(np.mean(confidences) if confidences else 1.0)


class ICDAR2015(craft_base_dataset):
    def __init__(self, net, icdar2015_folder, target_size=768):
        super().__init__(target_size)
        self.net = net
        self.img_folder = os.path.join(icdar2015_folder, "ch4_training_images")
        self.gt_folder = os.path.join(icdar2015_folder, "ch4_training_localization_transcription_gt")
        self.images_path = sorted(os.listdir(self.img_folder))

    def __getitem__(self, index):
        return self.pull_item(index)

    def __len__(self):
        return len(self.images_path)

    def load_gt(self, gt_path):
        bboxes, words = [], []
        for line in open(gt_path, encoding="utf-8-sig"):
            parts = line.strip().split(",")
            bboxes.append(np.array([int(v) for v in parts[:8]], np.float32).reshape(4, 2))
            words.append(",".join(parts[8:]))
        return bboxes, words

    def load_image_gt_and_confidencemask(self, index):
        name = self.images_path[index]
        word_bboxes, words = self.load_gt(os.path.join(self.gt_folder, "gt_%s.txt" % os.path.splitext(name)[0]))
        image = cv2.cvtColor(cv2.imread(os.path.join(self.img_folder, name)), cv2.COLOR_BGR2RGB)
        confidence_mask = np.ones(image.shape[:2], np.float32)
        character_bboxes, new_words, confidences = [], [], []
        for box, word in zip(word_bboxes, words):
            if word == "###":
                cv2.fillPoly(confidence_mask, [np.int32(box)], 0)
                continue
            boxes, _, confidence = self.inference_pursedo_bboxes(self.net, image, box, word)
            confidences.append(confidence)
            new_words.append(word)
            character_bboxes.append(boxes)
        return image, character_bboxes, new_words, confidence_mask, confidences


def build_icdar_loader(net, root):
    dataset = ICDAR2015(net, root, target_size=768)
    return data.DataLoader(dataset, batch_size=4, shuffle=True, num_workers=4, drop_last=True, pin_memory=True)
