# Source: https://github.com/sktime/pytorch-forecasting/issues/322
# Report: pytorch-forecasting's predict() kept every batch's output on the GPU and concatenated them at the end, so predicting over a large validation set (mode="raw", return_x=True) ran the GPU out of memory.
# Shape: the model's own predict loop runs under no_grad but appends each batch's raw output dict (and the input dict) straight into Python lists while they are still CUDA tensors; nothing leaves the device until the final concatenation.
# Expect: TML004 lines 29, 31
import torch


def _concatenate_output(outputs):
    return {key: torch.cat([out[key] for out in outputs], dim=0) for key in outputs[0]}


class ForecastingModelMixin:
    def _move_batch(self, x):
        return {name: value.to(self.device) for name, value in x.items()}

    def predict(self, dataloader, mode="prediction", return_x=False):
        self.eval()
        output, x_list = [], []
        with torch.no_grad():
            for x, _ in dataloader:
                x = self._move_batch(x)
                out = self(x)  # raw output is a dictionary of tensors
                out["prediction"] = self.transform_output(out)
                if mode == "prediction":
                    out = {"prediction": self.loss.to_prediction(out["prediction"])}
                elif mode == "quantiles":
                    out = {"prediction": self.loss.to_quantiles(out["prediction"])}

                output.append(out)  # expect: TML004
                if return_x:
                    x_list.append(x)  # expect: TML004

        output = _concatenate_output(output)
        if return_x:
            return output, _concatenate_output(x_list)
        return output
