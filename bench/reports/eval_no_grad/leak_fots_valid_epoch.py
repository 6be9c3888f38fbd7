# Source: https://github.com/jiangxiluning/FOTS.PyTorch/blob/035274ece686b3a1cb10b0324685e82d2d933277/FOTS/trainer/trainer.py
# Report: FOTS issue #97 (https://github.com/jiangxiluning/FOTS.PyTorch/issues/97) asks about a memory leak during validation; audited trainer validates under torch.no_grad()
# Shape: Trainer._valid_epoch of the FOTS text spotter with the no_grad block removed: detection+recognition forward after model.eval() keeps all activations per batch
# Expect: TML003 line 40
import numpy as np
import torch


class Trainer:
    def __init__(self, model, loss, metrics, valid_data_loader, label_converter, device):
        self.model = model
        self.loss = loss
        self.metrics = metrics
        self.valid_data_loader = valid_data_loader
        self.labelConverter = label_converter
        self.device = device

    def _to_tensor(self, *tensors):
        return [t.to(self.device) for t in tensors]

    def _shrink(self, transcripts, pred_boxes, pred_mapping, rois_mask, indices):
        keep = rois_mask == 1
        transcripts = transcripts[keep][indices]
        pred_boxes = pred_boxes[keep][indices]
        pred_mapping = pred_mapping[keep][indices]
        return transcripts, pred_boxes, pred_mapping

    def _valid_epoch(self):
        """Validate after training an epoch.

        The validation metrics in log must have the key 'val_metrics'.
        """
        self.model.eval()
        total_val_loss = 0
        total_val_metrics = np.zeros(len(self.metrics))
        for batch_idx, gt in enumerate(self.valid_data_loader):
            image_paths, img, score_map, geo_map, training_mask, transcripts, boxes, mapping = gt
            img, score_map, geo_map, training_mask = self._to_tensor(img, score_map, geo_map, training_mask)

            outputs = self.model.forward(img, boxes, mapping)  # expect: TML003
            pred_score_map, pred_geo_map, pred_recog, pred_boxes, pred_mapping, indices, rois_mask = outputs

            recog = None
            if len(pred_mapping) > 0:
                transcripts, pred_boxes, pred_mapping = self._shrink(
                    transcripts, pred_boxes, pred_mapping, rois_mask, indices)
                labels, label_lengths = self.labelConverter.encode(transcripts.tolist())
                recog = (labels, label_lengths)

            det_loss, reg_loss = self.loss(score_map, pred_score_map, geo_map, pred_geo_map,
                                           recog, pred_recog, training_mask)
            loss = det_loss + reg_loss
            total_val_loss += loss.item()

        return {
            "val_loss": total_val_loss / len(self.valid_data_loader),
            "val_metrics": (total_val_metrics / len(self.valid_data_loader)).tolist(),
        }
