# Source: https://github.com/talmolab/dreem/pull/141
# Report: PR "Bug fix for new track id assignment + GPU memory leaks + tracker cleanup": tracked frames (instances with GPU features, asso_output on the GPU) were kept across steps; fixed by moving frames to CPU (source note: commit ee329a4b3e284308ed7e7b78518d18ffc5ff14ef: dreem/models/gtr_runner.py, dreem/inference/tracker.py)
# Shape: GTRRunner._shared_eval_step in test mode extends self.test_results["preds"] with the tracker's frames as returned (GPU association matrix on each frame), no frame.to("cpu")
# Expect: TML004 line 64
import torch
from lightning import LightningModule

from dreem.models.global_tracking_transformer import GlobalTrackingTransformer
from dreem.training.losses import AssoLoss


class Tracker:
    """Sliding-window tracker: associates each query frame with the frames in the queue."""

    def __init__(self, window_size: int = 8):
        self.window_size = window_size
        self.persistent_tracking = False

    def __call__(self, model, frames):
        model.eval()
        for i, query_frame in enumerate(frames):
            context = frames[max(0, i - self.window_size):i + 1]
            all_instances = [inst for frame in context for inst in frame.instances]
            with torch.no_grad():
                asso_matrix = model(all_instances, query_frame.instances)
            query_frame.asso_output = asso_matrix[-1]
        return frames


class GTRRunner(LightningModule):
    def __init__(self, model_cfg: dict, tracker_cfg: dict, loss_cfg: dict):
        super().__init__()
        self.model = GlobalTrackingTransformer(**model_cfg)
        self.loss = AssoLoss(**loss_cfg)
        self.tracker = Tracker(**tracker_cfg)
        self.test_results = {"preds": [], "save_path": None}

    def forward(self, ref_instances, query_instances=None):
        return self.model(ref_instances, query_instances)

    def test_step(self, test_batch, batch_idx):
        result = self._shared_eval_step(test_batch[0], mode="test")
        if result is not None:
            self.log("test_loss", result["loss"], batch_size=result["batch_size"])
        return result

    def predict_step(self, batch, batch_idx):
        frames_pred = self.tracker(self.model, batch[0])
        return [frame.to("cpu") for frame in frames_pred]

    def _shared_eval_step(self, frames, mode: str):
        instances = [instance for frame in frames for instance in frame.instances]
        if len(instances) == 0:
            return None

        logits = self(instances)
        logits = [asso.matrix for asso in logits]
        loss = self.loss(logits, frames)

        return_metrics = {"loss": loss}
        if mode == "test":
            self.tracker.persistent_tracking = True
            frames_pred = self.tracker(self.model, frames)
            self.test_results["preds"].extend(frames_pred)  # expect: TML004
        return_metrics["batch_size"] = len(frames)
        return return_metrics

    def on_test_epoch_end(self):
        preds = self.test_results["preds"]
        self.print(f"tracked {len(preds)} frames")
