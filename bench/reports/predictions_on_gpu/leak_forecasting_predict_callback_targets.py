# Source: https://github.com/sktime/pytorch-forecasting/pull/2081
# Report: PredictCallback moved model outputs and inputs to CPU after each predict batch, but still appended the raw CUDA target tensors and decoder lengths to its lists, so VRAM grew linearly over trainer.predict() when return_y=True
# Shape: Lightning prediction-writer callback; on_predict_batch_end stores per-batch tensors on self lists that are only collated in on_predict_epoch_end; two appends keep the batch's device tensors
# Expect: TML004 line 45; TML004 line 47
import torch
from lightning.pytorch.callbacks import BasePredictionWriter


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


class PredictCallback(BasePredictionWriter):
    def __init__(self, mode="prediction", return_x=False, return_y=False,
                 return_decoder_lengths=False):
        super().__init__(write_interval="epoch")
        self.mode = mode
        self.return_x = return_x
        self.return_y = return_y
        self.return_decoder_lengths = return_decoder_lengths
        self._reset_data()

    def _reset_data(self):
        self._output, self._x_list, self._y, self._decode_lengths = [], [], [], []
        self._result = None

    def on_predict_epoch_start(self, trainer, pl_module):
        self._reset_data()

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        x, out = outputs
        lengths = x["decoder_lengths"]
        if self.mode == "prediction":
            out = pl_module.to_prediction(out)
        self._output.append(_to_cpu(out))
        if self.return_x:
            self._x_list.append(_to_cpu(x))
        if self.return_decoder_lengths:
            self._decode_lengths.append(lengths)  # expect: TML004
        if self.return_y:
            self._y.append(batch[1])  # expect: TML004

    def on_predict_epoch_end(self, trainer, pl_module):
        output = torch.cat(self._output, dim=0)
        result = {"output": output}
        if self.return_x:
            result["x"] = {k: torch.cat([d[k] for d in self._x_list]) for k in self._x_list[0]}
        if self.return_y:
            result["y"] = torch.cat(self._y, dim=0).cpu()
        if self.return_decoder_lengths:
            result["decoder_lengths"] = torch.cat(self._decode_lengths, dim=0).cpu()
        self._result = result
        self._output, self._x_list, self._y, self._decode_lengths = [], [], [], []
