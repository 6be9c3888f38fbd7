# Source: https://github.com/mkocabas/PARE/blob/ecdc2c1c4835cc19550760df01adcaccabfd120e/pare/core/trainer.py
# Report: Lightning validation_step of a human-mesh regressor keeps every predicted pose/shape/cam/vertex set in self.evaluation_results; here the helper lambda lost its .cpu().numpy()
# Shape: the local tolist lambda only splits the CUDA tensor into rows, so every predicted pose/shape/cam/vertex row of the val set stays on the GPU in self.evaluation_results until epoch end
# Expect: TML004 lines 52, 53, 54, 55
import joblib
import numpy as np
import pytorch_lightning as pl
import torch


class PARETrainer(pl.LightningModule):
    def __init__(self, model, J_regressor, hparams):
        super().__init__()
        self.model = model
        self.register_buffer("J_regressor", J_regressor)
        self.save_results = hparams.SAVE_RESULTS
        self.log_dir = hparams.LOG_DIR
        self.init_evaluation_variables()

    def init_evaluation_variables(self):
        self.val_mpjpe = []
        self.val_pampjpe = []
        self.evaluation_results = {"imgname": [], "mpjpe": []}
        if self.save_results:
            for k in ("pose", "shape", "cam", "vertices"):
                self.evaluation_results[k] = []

    def forward(self, x):
        return self.model(x)

    def validation_step(self, batch, batch_nb, dataloader_nb=0):
        images = batch["img"]
        with torch.no_grad():
            pred = self(images)
            pred_vertices = pred["smpl_vertices"]

        J = self.J_regressor[None].expand(pred_vertices.shape[0], -1, -1)
        gt_kp3d = batch["pose_3d"].cuda()
        pred_kp3d = torch.matmul(J, pred_vertices)
        pred_kp3d = pred_kp3d[:, :14] - pred_kp3d[:, [0]]
        err_joint = torch.sqrt(((pred_kp3d - gt_kp3d) ** 2).sum(dim=-1))
        error = err_joint.mean(dim=-1).cpu().numpy()
        r_error = np.zeros_like(error)

        self.val_mpjpe += error.tolist()
        self.val_pampjpe += r_error.tolist()
        self.evaluation_results["mpjpe"] += err_joint.cpu().numpy().tolist()
        self.evaluation_results["imgname"] += batch["imgname"]

        if self.save_results:
            tolist = lambda x: [i for i in x]
            self.evaluation_results["pose"] += tolist(pred["pred_pose"])  # expect: TML004
            self.evaluation_results["shape"] += tolist(pred["pred_shape"])  # expect: TML004
            self.evaluation_results["cam"] += tolist(pred["pred_cam"])  # expect: TML004
            self.evaluation_results["vertices"] += tolist(pred_vertices)  # expect: TML004

        return {"mpjpe": error.mean(), "pampjpe": r_error.mean()}

    def validation_epoch_end(self, outputs):
        mpjpe = 1000 * np.array(self.val_mpjpe).mean()
        self.log("val_mpjpe", float(mpjpe))
        res = {k: np.array(v) for k, v in self.evaluation_results.items()}
        joblib.dump(res, f"{self.log_dir}/evaluation_results.pkl")
        self.init_evaluation_variables()
